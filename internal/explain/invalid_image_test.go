package explain

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// "device kernel image is invalid" is the driver refusing a binary's code.
// Raised through flash-attn's CUDA extension (flash_attn_interface calls
// it), the fix names the flash-attn release whose wheels older drivers
// load (Dao-AILab/flash-attention#1749); raised in flash-attn's Triton
// kernels, the wheel is not the cause and no flash-attn release is named.
func TestInvalidKernelImageFixes(t *testing.T) {
	cases := []struct {
		frame string
		want  bool
	}{
		{`  File "/venv/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 165, in _flash_attn_varlen_forward`, true},
		{`  File "/venv/lib/python3.10/site-packages/flash_attn/ops/triton/rotary.py", line 202, in apply_rotary`, false},
		{`  File "/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1751, in _wrapped_call_impl`, false},
	}
	for _, c := range cases {
		log := "Traceback (most recent call last):\n" + c.frame + "\nRuntimeError: CUDA error: device kernel image is invalid\n"
		s, err := Default().Scan(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(s, nil)
		if len(fs) == 0 || fs[0].ID != finding.DriverTooOld {
			t.Fatalf("%s: got %v, want driver-too-old first", c.frame, ids(fs))
		}
		text := fixText(fs[0].Fixes)
		if got := strings.Contains(text, "flash-attn==2.8.0.post2"); got != c.want {
			t.Errorf("%s: names flash-attn 2.8.0.post2 = %v, want %v:\n%s", c.frame, got, c.want, text)
		}
		if !strings.Contains(text, "Upgrade the NVIDIA driver") {
			t.Errorf("%s: no driver upgrade:\n%s", c.frame, text)
		}
	}
}
