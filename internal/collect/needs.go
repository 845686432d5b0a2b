package collect

import "github.com/fastpath-dev/fastpath/internal/source"

// Needs are the files the collectors read bodies of, declared ahead of
// collection for sources that can only stream (an image's layers are read
// once, and what matches here is kept on the way). A file not listed is
// still found and read, by streaming its layer again: keeping this list in
// step with the collectors is a matter of speed, not of correctness. Each
// line names the collector that reads it.
var Needs = []source.Need{
	// osinfo: the release files, libc's version, the ELF header of a few
	// binaries for the architecture, ld.so's configuration.
	{Pattern: "/etc/*release"},
	{Pattern: "/etc/*_version"},
	{Pattern: "/usr/lib/os-release"},
	{Pattern: "/etc/alpine-release"},
	{Pattern: "/etc/ld.so.conf"},
	{Pattern: "/etc/ld.so.conf.d/*"},
	{Pattern: "**/libc.so.6", ELF: true},
	{Pattern: "**/ld-musl-*.so.1", ELF: true},
	{Pattern: "**/libc.musl-*.so.1", ELF: true},
	{Pattern: "**/bin/*", ELF: true}, // interpreters, launchers' shebangs, nvcc, gcc, sh
	// pyenv: environments, distribution metadata, .pth files, pyenv and
	// conda bookkeeping.
	{Pattern: "**/pyvenv.cfg"},
	{Pattern: "**/*.dist-info/*"},
	{Pattern: "**/*.egg-info/*"},
	{Pattern: "**/*.egg-info"},
	{Pattern: "**/*.pth"},
	{Pattern: "**/.python-version"},
	{Pattern: "**/.pyenv/version"},
	{Pattern: "**/conda-meta/*.json"},
	{Pattern: "**/lib/python3*/os.py"},
	// torch: its version, its build configuration, its libraries' dynamic
	// tables and fatbins.
	{Pattern: "**/torch/version.py"},
	{Pattern: "**/torch/_version.py"},
	{Pattern: "**/TorchConfig*.cmake"},
	{Pattern: "**/torch/lib/*.so*", ELF: true},
	// extensions: every shared object in an environment (its needed
	// libraries, run paths, fatbins), and the CUDA runtimes they link.
	{Pattern: "**/*.so", ELF: true},
	{Pattern: "**/*.so.*", ELF: true},
	// nvcc: the toolkit's version files and headers.
	{Pattern: "**/version.json"},
	{Pattern: "**/version.txt"},
	{Pattern: "**/cuda_runtime.h"},
	{Pattern: "**/cuda_runtime_api.h"},
	{Pattern: "**/cuda.h"},
	// toolchain: Python's headers and the build tools' versions.
	{Pattern: "**/patchlevel.h"},
	{Pattern: "**/pyconfig.h"},
	{Pattern: "**/Python.h"},
	{Pattern: "**/share/cmake-*/Modules/CMakeVersion*"},
	// model: configs a --model may name inside the source, and Hugging
	// Face cache pointers.
	{Pattern: "**/config.json"},
	{Pattern: "**/refs/main"},
}
