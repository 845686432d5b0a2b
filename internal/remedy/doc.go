// Package remedy is the one place fastpath builds the commands that change a
// machine: installing a CUDA compiler, torch, a kernel package or headers,
// pointing a build at a host compiler, and building a package from source.
// diagnose (a finding's fixes), plan (its steps), explain (fixes for a
// user's log) and fix --apply all take their commands from here, so that the
// same problem never gets two different cures.
//
// # Input: a Context, with provenance
//
// A Context is everything a remedy depends on. Each value is a Fact: the
// value, and where it came from (Origin): the machine fastpath looked at
// (FromMachine), a user's log (FromLog), a flag the user gave (FromFlag), or
// fastpath's own default (FromDefault). FromFacts fills a Context from a
// machine's facts; explain fills one from what it read in a log and hands
// the machine's facts over only where the log says nothing. Remedies name
// the origin of every figure they use ("MAX_JOBS=4 from 31 GiB total memory
// (log)"), so a user can see why a command reads as it does.
//
// The fields:
//
//   - TorchVersion: torch's version ("2.11.0+cu130").
//   - TorchCUDA: the CUDA major.minor torch was built with ("13.0"); ""
//     for a CPU build or when unknown.
//   - GPUs: compute capabilities ("9.0"), one per distinct GPU, and
//     GPUName for the words.
//   - Driver: the NVIDIA driver's version ("580.159.04").
//   - NVCC: the CUDA compiler builds would use, its major.minor ("" when
//     there is none).
//   - GCC: the host g++'s version ("13.3.0"); HostCXX its path.
//   - Platform: "linux", "darwin", "windows"; WSL true under Windows'
//     Linux subsystem; Distro the os-release "ID VERSION_ID" ("ubuntu
//     24.04"); DistroLike its ID_LIKE ("rhel centos fedora"), which
//     puts a rebuild in its family; Arch "x86_64" or "aarch64".
//   - BuildSystem: how the package at hand is built (BuildSetuptools:
//     setup.py with torch.utils.cpp_extension; BuildCMake; BuildUnknown).
//   - MemAvail, MemTotal (bytes) and CPUs: for MAX_JOBS and estimates.
//   - Python: the interpreter commands name; PythonKind "venv", "conda",
//     "uv", "system"; HasPip whether it has its own pip; SitePackages.
//   - Root: whether commands run as root (nil unknown).
//   - Machine: whether a machine's facts were read (then a value they
//     lack is absent, not unknown).
//   - PipArgs: the index options the user gave (--index-url, --find-links,
//     --no-index), added to every pip command.
//
// # Output: a Remedy
//
// A Remedy records its preconditions (checked against the Context), its
// commands, what it changes, what it costs (time, disk, memory, with the
// basis of each figure) and how to undo it. A command never contains a
// placeholder: where a value it needs is unknown, the remedy is Manual, has
// no commands, and FillIn says what the user must supply.
//
// Every pip command is built by Context.Pip, every shell word is quoted by
// Quote; nothing else in fastpath writes an install or build command.
package remedy
