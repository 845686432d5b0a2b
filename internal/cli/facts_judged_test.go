package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// staleFacts is a facts file as an older fastpath saved it, with that
// version's KB verdicts in it: driver 580.159.04 judged to support CUDA 11.0,
// and the H200's PCI id 0x2335 judged to be compute capability 5.0. The
// second GPU's capability is observed (--gpu), which no KB may change.
const staleFacts = `{"schema":"fastpath.v1","tool":"0.0.1-old","gpu":{
 "driver":{"version":"580.159.04","from":"/proc/driver/nvidia/version","cuda":"11.0"},
 "devices":[
  {"index":0,"name":"NVIDIA H200","bus_id":"0000:00:06.0","pci_device":"0x2335","capability":"5.0","capability_from":"pci-table"},
  {"index":1,"name":"NVIDIA H200","pci_device":"0x2335","capability":"12.0","capability_from":"--gpu"}]}}`

// TestSavedFactsAreRejudged: doctor --facts judges a saved file with today's
// KB, whatever verdicts the file carries (the collectors' tests check that
// fresh facts carry none).
func TestSavedFactsAreRejudged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old-facts.json")
	if err := os.WriteFile(path, []byte(staleFacts), 0o644); err != nil {
		t.Fatal(err)
	}
	gpuOf := func(args ...string) facts.GPU {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(args, nil, &out, &errb)
		if code != ExitOK && code != ExitFindings {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
		var doc struct {
			facts.Facts
			Nested *facts.Facts `json:"facts"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out.String())
		}
		if doc.Nested != nil {
			return doc.Nested.GPU
		}
		return doc.GPU
	}

	judged := gpuOf("doctor", "--facts", path, "--json")
	if judged.Driver == nil || judged.Driver.CUDA != "13.0" {
		t.Errorf("doctor --facts: driver %+v, want driver.cuda 13.0 (today's KB for 580.159.04), not the file's 11.0", judged.Driver)
	}
	if len(judged.Devices) != 2 {
		t.Fatalf("doctor --facts: devices %+v", judged.Devices)
	}
	if d := judged.Devices[0]; d.Capability != "9.0" || d.CapabilityFrom != facts.CapabilityFromPCITable {
		t.Errorf("doctor --facts: device 0 capability %q from %q, want 9.0 from the PCI table, not the file's 5.0", d.Capability, d.CapabilityFrom)
	}
	if d := judged.Devices[1]; d.Capability != "12.0" || d.CapabilityFrom != "--gpu" {
		t.Errorf("doctor --facts: device 1 capability %q from %q, want the observed 12.0 (--gpu) kept", d.Capability, d.CapabilityFrom)
	}

}
