# Helpers of bench_perf.py's report: file digests, load averages, number formats, the CPU's
# section key (model name and ISA flags) and the merge of this CPU's section into
# docs/performance.md (other CPUs' sections stay verbatim).
import hashlib
import os
import platform
import subprocess

def file_sha(path, n=12):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:n]


def loadavg():
    with open("/proc/loadavg") as f:
        return tuple(float(v) for v in f.read().split()[:3])


def fmt_load(la):
    return " / ".join(f"{v:.2f}" for v in la)


def fmt_mib(kib_or_none):
    return "—" if not kib_or_none else f"{kib_or_none / 1024:.0f} MiB"


def fmt_size(nbytes):
    if nbytes is None:
        return "—"
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.0f} kB"


def fmt_ms(ms):
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


# The ISA extensions that decide which kernels a CPU can run; a CPU's section in
# docs/performance.md is keyed by its model name and these.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
             "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve")


def cpu_key(cpu):
    flags = set(cpu.get("Flags", "").split())
    isa = [f for f in ISA_FLAGS if f in flags]
    return f"{cpu.get('Model name', platform.processor() or 'unknown CPU')} ({' '.join(isa) or 'no AVX2'})"


SECTION_BEGIN = "<!-- cpu: "
SECTION_END = "<!-- end cpu -->"


def merge_report(old, header, key, section):
    """docs/performance.md: `header`, then one section per CPU. This run's section replaces the one
    of the same CPU key; every other CPU's section stays verbatim (it carries its own date). A file
    from before the per-CPU sections becomes one section, keyed by its machine line."""
    sections = []  # [(key, lines)]
    if old:
        lines = old.splitlines()
        if any(line.startswith(SECTION_BEGIN) for line in lines):
            cur = None
            for line in lines:
                if line.startswith(SECTION_BEGIN):
                    cur = (line[len(SECTION_BEGIN):].rstrip(" ->"), [line])
                elif cur is not None:
                    cur[1].append(line)
                    if line == SECTION_END:
                        sections.append(cur)
                        cur = None
        else:
            start = next((i for i, line in enumerate(lines) if line.startswith("- date:")), None)
            machine = next((line for line in lines if line.startswith("- machine:")), "- machine: unknown")
            name = machine[len("- machine: "):].split(",")[0]
            if start is not None:
                k = f"{name} (ISA not recorded)"
                body = [("#" + line) if line.startswith("## ") else line for line in lines[start:]]
                sections.append((k, [SECTION_BEGIN + k + " -->", f"## {k}", ""] + body + [SECTION_END]))
    sections = [(k, v) for k, v in sections if k != key]
    sections.insert(0, (key, section))
    out = list(header) + [""]
    for _, lines in sections:
        out += lines + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def cpu_info():
    info = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except OSError:
        pass
    return info
