package explain

import (
	"strings"
	"testing"
)

// TestRunTimeBuildRetry: a build torch runs while the program runs
// (torch.utils.cpp_extension.load, DeepSpeed's ops) is retried by running
// the program again after deleting the op's build folder, never by a pip
// install that has nothing to rebuild.
func TestRunTimeBuildRetry(t *testing.T) {
	// NVlabs/stylegan3#96: the folder is the one its sources were copied
	// to under ~/.cache/torch_extensions.
	_, fixes := explainText(t, corpusLog(t, "stylegan3-96-bias-act-compute-86.log"))
	if strings.Contains(fixes, "pip install --no-build-isolation") ||
		!strings.Contains(fixes, "Then run the program again: torch builds bias_act_plugin") ||
		!strings.Contains(fixes, "$ rm -rf /home/howso/.cache/torch_extensions/bias_act_plugin/3cb576a0039689487cfba59279dd6d46-nvidia-geforce-rtx-3090\n") {
		t.Errorf("stylegan3 bias_act_plugin:\n%s", fixes)
	}

	// FlyMyAI/flymyai-lora-trainer#54: optimum-quanto's kernels, no
	// folder in the log: torch's default one is named in words.
	_, fixes = explainText(t, corpusLog(t, "flymyai-54-quanto-compute-89-wsl.log"))
	if strings.Contains(fixes, "pip install --no-build-isolation") || strings.Contains(fixes, "rm -rf") ||
		!strings.Contains(fixes, "$TORCH_EXTENSIONS_DIR/quanto_cuda when TORCH_EXTENSIONS_DIR is set, else ~/.cache/torch_extensions/py310_cu<cuda>/quanto_cuda") {
		t.Errorf("quanto_cuda:\n%s", fixes)
	}

	// deepspeedai/DeepSpeed#7143: DeepSpeed compiling fused_adam from its
	// installed sources; its install can build the ops instead.
	_, fixes = explainText(t, corpusLog(t, "deepspeed-7143-gcc-too-old.log"))
	if strings.Contains(fixes, "build the package again") || !strings.Contains(fixes, "Then run the program again") ||
		!strings.Contains(fixes, "DS_BUILD_FUSED_ADAM=1 ") || !strings.Contains(fixes, "py312_cu<cuda>/fused_adam") || !strings.Contains(fixes, "Install g++ 9 or newer") {
		t.Errorf("DeepSpeed fused_adam (gcc 8):\n%s", fixes)
	}

	// WisconsinAIVision/few-shot-gan-adaptation#15: no ninja for load():
	// install it, then run the program again.
	_, fixes = explainText(t, corpusLog(t, "fewshotgan-15-ninja-load.log"))
	if !strings.Contains(fixes, "pip install ninja") || !strings.Contains(fixes, "Then run the program again") {
		t.Errorf("ninja for load():\n%s", fixes)
	}

	// zhanghang1989/PyTorch-Encoding#297 and hlzhu09/Hierarchical-Human-
	// Parsing#9: CUDA_HOME is ":/usr/local/cuda", a path list; the home
	// named is that value, not /usr/local/cuda (which may well hold nvcc:
	// the fix sets CUDA_HOME to it, without the ':').
	for _, name := range []string{"pytorch-encoding-297-cuda-home-colon.log", "hierarchical-human-parsing-9-nvcc-colon-home.log"} {
		detail, fixes := explainText(t, corpusLog(t, name))
		if !strings.Contains(fixes, "$ export CUDA_HOME=/usr/local/cuda\n") || strings.Contains(fixes, "unset CUDA_HOME") || !strings.Contains(detail, ":/usr/local/cuda/bin/nvcc") ||
			!strings.Contains(fixes, "Then run the program again") || strings.Contains(fixes, "build the package again") {
			t.Errorf("%s:\n%s\n%s", name, detail, fixes)
		}
	}

	// zhanghang1989/PyTorch-Encoding#162: no Python.h for the venv's
	// Python 3.6 that the build compiled against, whatever this machine's
	// Python is (the seed machine is Ubuntu 24.04, whose archive has no
	// python3.6-dev: TestPythonHeadersTheArchiveHas).
	s, err := Default().Scan(strings.NewReader(corpusLog(t, "pytorch-encoding-162-python-h-enclib-cpu.log")))
	if err != nil {
		t.Fatal(err)
	}
	if fs := Findings(s, seedFacts(t)); len(fs) == 0 || !strings.Contains(fixText(fs[0].Fixes), "headers for Python 3.6") ||
		!strings.Contains(fixText(fs[0].Fixes), "Then run the program again: torch builds enclib_cpu") {
		t.Errorf("Python.h for enclib_cpu on the seed machine: %v", fs)
	}

	// sgl-project/sglang#1117: Triton's launcher, not torch's load().
	_, fixes = explainText(t, corpusLog(t, "sglang-1117-triton-launcher-python-h.log"))
	if strings.Contains(fixes, "pip install --no-build-isolation") || strings.Contains(fixes, "rm -rf") ||
		!strings.Contains(fixes, "Then run the program again: Triton compiles its C launcher") {
		t.Errorf("Triton launcher without Python.h:\n%s", fixes)
	}

	// xsc1234/INFO-RAG#7: DeepSpeed's own words for the same.
	_, fixes = explainText(t, corpusLog(t, "info-rag-7-deepspeed-jit-no-ninja.log"))
	if !strings.Contains(fixes, "pip install ninja") || !strings.Contains(fixes, "Then run the program again: torch builds fused_adam") ||
		!strings.Contains(fixes, "DS_BUILD_FUSED_ADAM=1 ") {
		t.Errorf("DeepSpeed without ninja:\n%s", fixes)
	}

	// The lines torch and DeepSpeed print before the compiler runs
	// (LianjiaTech/BELLE#150), then an nvcc that cannot target the GPU:
	// the folder comes from the ninja line, the variable from the op.
	const belle = "Using /home/sl_tyrc/.cache/torch_extensions/py310_cu116 as PyTorch extensions root...\n" +
		"Emitting ninja build file /home/sl_tyrc/.cache/torch_extensions/py310_cu116/fused_adam/build.ninja...\n" +
		"Building extension module fused_adam...\n" +
		"  File \"/data/gengzk/miniconda3/envs/tianhs-Belle/lib/python3.10/site-packages/deepspeed/ops/op_builder/builder.py\", line 485, in jit_load\n" +
		"nvcc fatal   : Unsupported gpu architecture 'compute_89'\n" +
		"RuntimeError: Error building extension 'fused_adam'\n"
	_, fixes = explainText(t, belle)
	if !strings.Contains(fixes, "$ rm -rf /home/sl_tyrc/.cache/torch_extensions/py310_cu116/fused_adam\n") ||
		!strings.Contains(fixes, "DS_BUILD_FUSED_ADAM=1 ") || strings.Contains(fixes, "DS_BUILD_OPS") {
		t.Errorf("DeepSpeed fused_adam (sm_89):\n%s", fixes)
	}
	// The retry comes before DeepSpeed's alternative.
	if i, j := strings.Index(fixes, "Then run the program again"), strings.Index(fixes, "DS_BUILD_FUSED_ADAM"); i < 0 || j < i {
		t.Errorf("order:\n%s", fixes)
	}
}

// TestColossalAIIsNotDeepSpeed: ColossalAI's op builder has DeepSpeed's
// layout (kernel/op_builder/builder.py, hpcaitech/ColossalAI#3602) but no
// DS_BUILD_* variables.
func TestColossalAIIsNotDeepSpeed(t *testing.T) {
	const frames = "  File \"/home/jovyan/work/projects/Example/ColossalAI/venv/lib/python3.8/site-packages/colossalai/kernel/op_builder/builder.py\", line 187, in load\n" +
		"    op_module = load(name=self.name,\n" +
		"  File \"/home/jovyan/work/projects/Example/ColossalAI/venv/lib/python3.8/site-packages/torch/utils/cpp_extension.py\", line 1508, in _jit_compile\n"
	_, fixes := explainText(t, frames+"nvcc fatal   : Unsupported gpu architecture 'compute_89'\nRuntimeError: Error building extension 'cpu_adam'\n")
	if strings.Contains(fixes, "DS_BUILD") || !strings.Contains(fixes, "Then run the program again: torch builds cpu_adam") {
		t.Errorf("ColossalAI cpu_adam:\n%s", fixes)
	}
}

// TestRunTimeBuildFolderHostile: the folder a fix deletes comes from an
// untrusted log, so only a folder torch builds an op in is ever named in a
// command, and always quoted.
func TestRunTimeBuildFolderHostile(t *testing.T) {
	const tail = "Building extension module fused_adam...\nnvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
	for _, ninja := range []string{
		"Emitting ninja build file /home/user/build.ninja...\n",            // a home directory
		"Emitting ninja build file /build.ninja...\n",                      // the root
		"Emitting ninja build file /home/user/../fused_adam/build.ninja\n", // not clean
		"Emitting ninja build file relative/fused_adam/build.ninja...\n",   // not absolute
		"Using / as PyTorch extensions root...\n",                          // root + op is one level deep
	} {
		_, fixes := explainText(t, ninja+tail)
		if strings.Contains(fixes, "$ rm ") || !strings.Contains(fixes, "first delete its build folder") {
			t.Errorf("%q: a command deletes a folder torch does not build in:\n%s", ninja, fixes)
		}
	}
	// An op named like a user: its folder would be a home folder.
	for _, log := range []string{
		"Emitting ninja build file /home/alice/build.ninja...\nBuilding extension module alice...\n",
		"Using /home as PyTorch extensions root...\nBuilding extension module alice...\n",
		"Using /root as PyTorch extensions root...\nBuilding extension module alice...\n",
	} {
		_, fixes := explainText(t, log+"nvcc fatal   : Unsupported gpu architecture 'compute_89'\n")
		if strings.Contains(fixes, "$ rm ") {
			t.Errorf("%q: a command deletes a home folder:\n%s", log, fixes)
		}
	}
	// torch builds in root/op: that folder, not the root.
	_, fixes := explainText(t, "Using /home/user as PyTorch extensions root...\n"+tail)
	if !strings.Contains(fixes, "$ rm -rf /home/user/fused_adam\n") {
		t.Errorf("root and op:\n%s", fixes)
	}
	_, fixes = explainText(t, "Emitting ninja build file /tmp/$(reboot)/fused_adam/build.ninja...\n"+tail)
	if !strings.Contains(fixes, "$ rm -rf '/tmp/$(reboot)/fused_adam'\n") {
		t.Errorf("shell characters not quoted:\n%s", fixes)
	}
}

// TestDeepSpeedBuilderCUDAMismatch: DeepSpeed's op builder refuses an nvcc
// of another CUDA than torch's in its own words (bytedance/lightseq#526,
// its copy of the builder); its "APIs are compatible, accepting this
// combination" line is no failure.
func TestDeepSpeedBuilderCUDAMismatch(t *testing.T) {
	s, err := Default().Scan(strings.NewReader(corpusLog(t, "lightseq-526-ds-builder-cuda-mismatch.log")))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 || fs[0].ID != "nvcc-torch-cuda-mismatch" || !strings.Contains(fs[0].Title, "CUDA 12.3 but torch was built with CUDA 12.1") ||
		!strings.Contains(fixText(fs[0].Fixes), "nvidia/cuda:12.1") {
		t.Fatalf("lightseq#526: %v", fs)
	}
	s, err = Default().Scan(strings.NewReader("Installed CUDA version 11.2 does not match the version torch was compiled with 11.8 but since the APIs are compatible, accepting this combination\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := Findings(s, nil); len(fs) != 0 {
		t.Errorf("an accepted minor mismatch is no failure: %v", ids(fs))
	}
}

// TestSetupBuildStaysPip: a setup.py build prints torch's ninja line for
// its build/temp folder too; it is still retried with pip.
func TestSetupBuildStaysPip(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "chattts-enhanced-3-deepspeed-pip-cuda-home.log"))
	if !strings.Contains(fixes, "pip install --no-build-isolation deepspeed") || strings.Contains(fixes, "run the program again") {
		t.Errorf("deepspeed's pip build:\n%s", fixes)
	}
}

// FuzzRunTimeFolder: whatever the log says, a fix deletes only a folder
// torch builds an op in (deletableFolder), quoted as one shell word.
func FuzzRunTimeFolder(f *testing.F) {
	f.Add("Using /home/u/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\nEmitting ninja build file /home/u/.cache/torch_extensions/py310_cu121/fused_adam/build.ninja...\nBuilding extension module fused_adam...\nnvcc fatal   : Unsupported gpu architecture 'compute_89'\n")
	f.Add("Emitting ninja build file /tmp/$(x)/op/build.ninja\nBuilding extension module op...\n/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found\n")
	f.Add("nvcc -DTORCH_EXTENSION_NAME=op -c /a/torch_extensions/op/x/y.cu -o y.cuda.o\nnvcc fatal   : Unsupported gpu architecture 'compute_89'\n")
	f.Fuzz(func(t *testing.T, log string) {
		s, err := Default().Scan(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range Findings(s, nil) {
			for _, fx := range fd.Fixes {
				for _, c := range fx.Commands {
					dir, ok := strings.CutPrefix(c, "rm -rf ")
					if !ok {
						continue
					}
					if q, ok := strings.CutPrefix(dir, "'"); ok {
						dir = strings.ReplaceAll(strings.TrimSuffix(q, "'"), `'\''`, "'")
					}
					op := ""
					if s.Facts.JITOp != nil {
						op = s.Facts.JITOp.Value
					}
					if !deletableFolder(dir, op) || strings.ContainsAny(c, "\n") {
						t.Fatalf("deletes %q (op %q): %q", dir, op, c)
					}
				}
			}
		}
	})
}
