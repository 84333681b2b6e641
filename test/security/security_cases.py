#!/usr/bin/env python3
# Security regression cases (issue 26): security_cases.py CASE --relaxc PATH --relax-run PATH
# --work DIR. Each case tries what a hostile user of a shared build machine would:
#   injection:     hostile file names (quotes, spaces, ';', $(...), backticks, a leading '-',
#                  newlines) as --partition-graph, -o and TMPDIR paths, for every external
#                  program relaxc runs (Graphviz dot, ld.lld, ptxas when the CUDA toolkit is
#                  here); no command may run (no PWNED file appears), each write lands at the
#                  name given;
#   symlink:       links planted at every name a write uses (the destination, the old predictable
#                  temporary names) point at a victim file, which must stay untouched; under
#                  strace, every file relaxc / relax-run create (outside programs they spawn)
#                  is opened with O_CREAT | O_EXCL | O_NOFOLLOW;
#   amplification: eight [1]-shaped initializers whose external data points at a 256 MiB file
#                  compile with a peak RSS (getrusage of the child) under 256 MiB and the right
#                  values; an explicit 256 MiB `length` is refused, also under 256 MiB;
#   plugin_names:  a pattern file declaring the name of a registered plugin is refused.
import argparse
import os
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HOSTILE = ["g'x", "a b", "x;touch PWNED;y", "g';touch PWNED;echo '", "$(touch PWNED)",
           "`touch PWNED`", "-oPWNED", "-", 'q"touch PWNED"', "n\ntouch PWNED", "*", "~"]
PATTERNS = "plugin sectoy merge\npattern relu = nn.relu(*)\n"
MIB = 1 << 20


def fail(msg):
    raise SystemExit("FAIL: " + msg)


class Runner:
    def __init__(self, args):
        self.relaxc, self.relax_run = args.relaxc, args.relax_run
        self.work = os.path.join(args.work, args.case)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, *names):
        return os.path.join(self.work, *names)

    def run(self, cmd, expect_rc=0, **kw):
        print("+ " + " ".join(repr(c) if re.search(r"\s|['\"]", c) else c for c in cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)
        sys.stdout.write(p.stdout[-3000:] + p.stderr[-3000:])
        if expect_rc is not None and p.returncode != expect_rc:
            fail(f"exit code {p.returncode}, expected {expect_rc}")
        return p

    def no_side_effect(self, *roots):
        """No file named PWNED anywhere under the work folder or `roots`."""
        for root in (self.work,) + roots:
            for d, _, files in os.walk(root):
                if "PWNED" in files:
                    fail(f"a hostile name ran a command: {os.path.join(d, 'PWNED')} exists")


def relu_model():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["t"], name="mm"),
             helper.make_node("Relu", ["t"], ["y"], name="relu0")]
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], np.eye(4, dtype=np.float32).ravel())
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def save_model(r):
    p = r.path("m.onnx")
    onnx.save(relu_model(), p)
    pat = r.path("sec.pat")
    with open(pat, "w") as f:
        f.write(PATTERNS)
    x = r.path("x.npy")
    np.save(x, np.array([[1, -2, 3, -4], [-5, 6, -7, 8]], np.float32))
    return p, pat, x


def check_runs(r, so, x):
    p = r.run([r.relax_run, so, "--input", "x=" + x])
    if "values=[1, 0, 3, 0, 0, 6, 0, 8]" not in p.stdout:
        fail(f"{so!r} does not compute relu(x)")


def case_injection(r):
    model, pat, x = save_model(r)
    cwd = r.path("cwd")
    os.makedirs(cwd)
    graph_base = [r.relaxc, "compile", model, "--pass-option", f"partition.patterns={pat}"]
    have_ptxas = os.access(os.path.join(os.environ.get("RELAX_CUDA_HOME", "/usr/local/cuda"),
                                        "bin", "ptxas"), os.X_OK)
    for i, name in enumerate(HOSTILE):
        # Graphviz dot: the graph path, relative to the working folder (a leading '-' stays
        # leading), with the format from its extension.
        graph = name + ".svg"
        r.run(graph_base + ["-o", r.path(f"g{i}.so"), f"--partition-graph={graph}"], cwd=cwd)
        with open(os.path.join(cwd, graph)) as f:
            if "<svg" not in f.read():
                fail(f"--partition-graph {graph!r} is not an SVG")
        # A hostile extension is a format dot does not know: refused before anything runs.
        p = r.run(graph_base + ["-o", r.path(f"h{i}.so"), f"--partition-graph=g.{name}"],
                  expect_rc=1, cwd=cwd)
        if "error: --partition-graph" not in p.stderr:
            fail(f"--partition-graph g.{name!r}: no error naming the option")
        # ld.lld (and the artifact writer): a hostile output name and a hostile TMPDIR.
        tmpdir = r.path("tmp" + str(i), name)
        os.makedirs(tmpdir)
        env = dict(os.environ, TMPDIR=tmpdir)
        out = os.path.join(cwd, name + ".so")
        r.run([r.relaxc, "compile", model, "-o", out], cwd=cwd, env=env)
        check_runs(r, out, x)
        if os.listdir(tmpdir):
            fail(f"scratch files left in TMPDIR {tmpdir!r}: {os.listdir(tmpdir)}")
        if have_ptxas:
            r.run([r.relaxc, "compile", model, "--target", "cuda -arch=sm_90", "-o",
                   os.path.join(cwd, name + ".cuda.so")], cwd=cwd, env=env)
        r.no_side_effect(cwd)
    # A model's output name with terminal escapes and a newline: printed escaped.
    name = "y\x1b[2J\x1b]0;pwn\x07\nerror: injected"
    g = helper.make_graph([helper.make_node("Relu", ["x"], [name], name="relu0")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2])])
    esc = r.path("esc.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), esc)
    r.run([r.relaxc, "compile", esc, "-o", r.path("esc.so")])
    x2 = r.path("x2.npy")
    np.save(x2, np.ones(2, np.float32))
    p = r.run([r.relax_run, r.path("esc.so"), "--input", "x=" + x2])
    if "\x1b" in p.stdout or "\x07" in p.stdout or "\nerror: injected" in p.stdout:
        fail("control characters of an output name reached the terminal")
    print("PASS: output names are printed with control characters escaped")
    print(f"PASS: {len(HOSTILE)} hostile names x (dot, dot format, ld.lld, TMPDIR"
          f"{', ptxas' if have_ptxas else ''}): no command ran")


def last_pid():
    try:
        with open("/proc/sys/kernel/ns_last_pid") as f:
            return int(f.read())
    except OSError:
        return None


def plant(link, victim):
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(victim, link)


def created_without_excl(trace):
    """Lines of an `strace -f` log where the traced tool itself (not a program it spawned)
    opened a file with O_CREAT but without O_EXCL or O_NOFOLLOW."""
    spawned, root, bad = set(), None, []
    for line in trace.splitlines():
        m = re.match(r"(\d+)\s+(.*)", line)
        if not m:
            continue
        pid, call = int(m.group(1)), m.group(2)
        if root is None and call.startswith("execve("):
            root = pid
            continue
        if call.startswith("execve(") and pid != root:
            spawned.add(pid)
        if pid in spawned or not re.match(r"(open|openat|creat)\(", call):
            continue
        if call.startswith("creat(") or ("O_CREAT" in call and not (
                "O_EXCL" in call and "O_NOFOLLOW" in call)):
            bad.append(line)
    return bad


def case_symlink(r):
    model, pat, x = save_model(r)
    victim = r.path("victim.txt")
    with open(victim, "w") as f:
        f.write("precious\n")

    def untouched(what):
        with open(victim, "rb") as f:
            if f.read() != b"precious\n":
                fail(f"{what}: the symlink's target was overwritten")
        print(f"PASS: {what}: target untouched")

    # -o OUT: OUT itself and the names the artifact writer used to use (OUT.tmp.<pid>, the
    # pid predictable from ns_last_pid) are links to the victim.
    out = r.path("out.so")
    plant(out, victim)
    base = last_pid()
    if base is not None:
        for pid in range(base + 1, base + 64):
            plant(f"{out}.tmp.{pid}", victim)
    r.run([r.relaxc, "compile", model, "-o", out])
    untouched("-o OUT (a link at OUT and at OUT.tmp.<pid>)")
    if os.path.islink(out) or not os.path.isfile(out):
        fail("OUT should now be the artifact, a regular file")
    check_runs(r, out, x)
    # --partition-graph: the graph path and the old temporary `<path>.dot.tmp`.
    for ext in ("svg", "dot"):
        g = r.path("g." + ext)
        plant(g, victim)
        plant(g + ".dot.tmp", victim)
        r.run([r.relaxc, "compile", model, "-o", r.path("g.so"), "--pass-option",
               f"partition.patterns={pat}", "--partition-graph", g])
        untouched(f"--partition-graph g.{ext}")
        if os.path.islink(g):
            fail(f"g.{ext} is still the planted link")
    # run --output-dir: the output's file name.
    outdir = r.path("outdir")
    os.makedirs(outdir)
    plant(os.path.join(outdir, "y.npy"), victim)
    r.run([r.relax_run, out, "--input", "x=" + x, "--output-dir", outdir])
    untouched("relax-run --output-dir (a link at y.npy)")
    # A link to something that is not a regular file (/dev/stdout -> /proc/self/fd/1 as root
    # would become a regular file): refused, the device untouched.
    dev = r.path("dev.so")
    plant(dev, "/dev/null")
    p = r.run([r.relaxc, "compile", model, "-o", dev], expect_rc=1)
    if "not a regular file" not in p.stderr or not os.path.islink(dev):
        fail("-o naming a link to /dev/null must be refused and the link kept")
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        fail("/dev/null is no longer a device")
    print("PASS: -o LINK-TO-DEVICE refused")
    # A sequence output's folder: a link planted at DIR/<name> is not followed.
    seq = r.path("seq.onnx")
    g = helper.make_graph([helper.make_node("SequenceConstruct", ["x", "x"], ["s"], name="sc")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), seq)
    r.run([r.relaxc, "compile", seq, "-o", r.path("seq.so")])
    x2 = r.path("x2.npy")
    np.save(x2, np.ones(2, np.float32))
    victim_dir = r.path("victim_dir")
    os.makedirs(victim_dir)
    with open(os.path.join(victim_dir, "0.npy"), "w") as f:
        f.write("precious\n")
    seq_out = r.path("seq_out")
    os.makedirs(seq_out)
    plant(os.path.join(seq_out, "s"), victim_dir)
    p = r.run([r.relax_run, r.path("seq.so"), "--input", "x=" + x2, "--output-dir", seq_out],
              expect_rc=1)
    if "is not a directory (a symlink there is not followed)" not in p.stderr:
        fail("a link planted at a sequence output's folder must be refused")
    if sorted(os.listdir(victim_dir)) != ["0.npy"] or open(os.path.join(victim_dir, "0.npy")).read() != "precious\n":
        fail("files were written through the link at the sequence output's folder")
    print("PASS: relax-run --output-dir (a link at a sequence output's folder): refused")
    # Names up to NAME_MAX: the temporary's longer name still fits.
    long_out = r.path("L" * 250 + ".so")
    r.run([r.relaxc, "compile", model, "-o", long_out])
    check_runs(r, long_out, x)
    print("PASS: -o with a 253-character file name")
    # Every file the tools create, by the system calls they make: O_CREAT | O_EXCL | O_NOFOLLOW.
    strace = shutil.which("strace")
    if not strace:
        fail("strace is not installed (scripts/setup.sh installs it)")
    for tool_cmd in ([r.relaxc, "compile", model, "-o", r.path("s.so"), "--pass-option",
                      f"partition.patterns={pat}", "--partition-graph", r.path("s.svg")],
                     [r.relaxc, "compile", model, "-o", r.path("s.so"), "--partition-graph",
                      r.path("s.dot")],
                     [r.relax_run, out, "--input", "x=" + x, "--output-dir", outdir],
                     [r.relaxc, "run", out, "--input", "x=" + x, "--output-dir", outdir]):
        log = r.path("strace.log")
        if os.path.exists(log):
            os.remove(log)
        r.run([strace, "-f", "-qq", "-o", log, "-e", "trace=open,openat,creat,execve"] + tool_cmd)
        with open(log) as f:
            bad = created_without_excl(f.read())
        if bad:
            fail(f"{os.path.basename(tool_cmd[0])} created files without O_EXCL|O_NOFOLLOW:\n" +
                 "\n".join(bad))
        print(f"PASS: {' '.join(os.path.basename(c) for c in tool_cmd[:2])}: every created file "
              "is O_CREAT|O_EXCL|O_NOFOLLOW")


def peak_rss_mib(cmd, **kw):
    """(exit code, stderr, peak RSS in MiB of that child alone: os.wait4's rusage)."""
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    sys.stdout.write(err[-2000:])
    return p.returncode, err, usage.ru_maxrss / 1024.0


def case_amplification(r):
    d = r.path("model")
    os.makedirs(d)
    big = os.path.join(d, "big.bin")
    values = np.arange(1, 9, dtype=np.float32)
    with open(big, "wb") as f:
        f.write(values.tobytes())
        f.truncate(256 * MIB)  # sparse: no disk used

    def build(name, length=None):
        inits = []
        for i in range(8):
            t = TensorProto()
            t.name, t.data_type = f"w{i}", TensorProto.FLOAT
            t.dims.extend([1])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "big.bin"), ("offset", str(4 * i))) + (
                    (("length", str(length)),) if length else ()):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
        nodes, prev = [], "x"
        for i in range(8):
            nodes.append(helper.make_node("Add", [prev, f"w{i}"], [f"s{i}"], name=f"add{i}"))
            prev = f"s{i}"
        nodes.append(helper.make_node("Identity", [prev], ["y"], name="out"))
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
        p = os.path.join(d, name + ".onnx")
        with open(p, "wb") as f:
            f.write(m.SerializeToString())
        print(f"{p}: {os.path.getsize(p)} bytes")
        return p

    so = r.path("amp.so")
    rc, err, rss = peak_rss_mib([r.relaxc, "compile", build("amp"), "-o", so])
    print(f"compile: exit {rc}, peak RSS {rss:.0f} MiB")
    if rc != 0:
        fail("the model with eight [1] external initializers must compile")
    if rss >= 256:
        fail(f"peak RSS {rss:.0f} MiB >= 256 MiB: the external data was read past what the "
             "tensors declare")
    x = r.path("x.npy")
    np.save(x, np.zeros(4, np.float32))
    p = r.run([r.relax_run, so, "--input", "x=" + x])
    if "values=[36, 36, 36, 36]" not in p.stdout:
        fail("y should be x + 1 + 2 + ... + 8 = 36")
    rc, err, rss = peak_rss_mib([r.relaxc, "compile", build("amp_len", 256 * MIB), "-o",
                                 r.path("amp_len.so")])
    print(f"compile with length=256 MiB: exit {rc}, peak RSS {rss:.0f} MiB")
    if rc != 1 or "error:" not in err or "initializer 'w0'" not in err or "needs 4 bytes" not in err:
        fail("an external 'length' that disagrees with the declared shape must be refused, "
             "naming the initializer")
    if rss >= 256:
        fail(f"peak RSS {rss:.0f} MiB >= 256 MiB before the refusal")
    # 80 tensors naming one 16 MiB range: refused (ranges may not overlap), not read 80 times.
    shared = os.path.join(d, "shared.bin")
    with open(shared, "wb") as f:
        f.truncate(16 * MIB)
    inits = []
    for i in range(80):
        t = TensorProto()
        t.name, t.data_type = f"u{i}", TensorProto.FLOAT
        t.dims.extend([4 * MIB])
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "shared.bin"
        inits.append(t)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    shared_model = os.path.join(d, "shared.onnx")
    with open(shared_model, "wb") as f:
        f.write(m.SerializeToString())
    rc, err, rss = peak_rss_mib([r.relaxc, "compile", shared_model, "-o", r.path("shared.so")])
    print(f"compile with 80 tensors on one range: exit {rc}, peak RSS {rss:.0f} MiB")
    if rc != 1 or "initializer 'u1': its external data" not in err or "overlaps that of " \
            "initializer 'u0'" not in err or rss >= 256:
        fail("tensors sharing external bytes must be refused before they are read again")
    # Numbers a hostile model can put in the fields: clean errors, never "internal error".
    for tag, dims, dtype, kv, needle in (
            ("int4_max", [49, 73, 127, 337, 92737, 649657], 22, (), "runs past the end"),
            ("offset_big", [1], TensorProto.FLOAT, (("offset", "9999999999999999999"),),
             "not a non-negative integer below 2^63")):
        t = TensorProto()
        t.name, t.data_type = "w", dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "big.bin"),) + kv:
            e = t.external_data.add()
            e.key, e.value = k, v
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
        mp = os.path.join(d, tag + ".onnx")
        with open(mp, "wb") as f:
            f.write(m.SerializeToString())
        p = r.run([r.relaxc, "compile", mp, "-o", r.path(tag + ".so")], expect_rc=1)
        if needle not in p.stderr or "internal error" in p.stderr:
            fail(f"{tag}: expected a clean error with {needle!r}")
    print("PASS: external data is read only as far as the tensors declare, once per byte")


def case_plugin_names(r):
    model, _, _ = save_model(r)
    p = r.run([r.relaxc, "compile", model, "-o", r.path("n.so"), "--byoc=no_such_plugin"],
              expect_rc=None)
    known = re.search(r"registered: ([^)]*)\)", p.stderr)
    builtin = [n.strip() for n in known.group(1).split(",")] if known else []
    builtin = [n for n in builtin if n and n != "none"]
    names = builtin[:1] + ["twin"]
    for i, name in enumerate(names):
        a, b = r.path(f"a{i}.pat"), r.path(f"b{i}.pat")
        with open(a, "w") as f:
            f.write(f"plugin {name}\npattern relu = nn.relu(*)\n")
        with open(b, "w") as f:
            f.write(f"plugin {name}\npattern mm = matmul(*, *)\n")
        files = a if name in builtin else f"{a},{b}"
        p = r.run([r.relaxc, "compile", model, "-o", r.path(f"n{i}.so"), "--pass-option",
                   f"partition.patterns={files}"], expect_rc=1)
        if f"declares plugin '{name}'" not in p.stderr or "already registered" not in p.stderr:
            fail(f"a pattern table declaring plugin '{name}' twice must be refused")
        print(f"PASS: a pattern table named '{name}' "
              f"({'built in' if name in builtin else 'another table'}) is refused")
    # Plugin names become symbols and DOT ids: letters, digits and _ only.
    bad = r.path("bad_name.pat")
    with open(bad, "w") as f:
        f.write('plugin p;graph[dpi=600]\npattern relu = nn.relu(*)\n')
    p = r.run([r.relaxc, "compile", model, "-o", r.path("bad.so"), "--pass-option",
               f"partition.patterns={bad}"], expect_rc=1)
    if "a plugin name is letters, digits and _" not in p.stderr:
        fail("a pattern table's plugin name with DOT syntax must be refused")
    # A space inside a file name is part of it (it used to be dropped: 'my pat' read 'mypat').
    for fname, plugin in (("my pat.pat", "spaced"), ("mypat.pat", "unspaced")):
        with open(r.path(fname), "w") as f:
            f.write(f"plugin {plugin}\npattern relu = nn.relu(*)\n")
    p = r.run([r.relaxc, "compile", model, "-o", r.path("sp.so"), "--partition-report",
               "--pass-option", f"partition.patterns= {r.path('my pat.pat')} "])
    if "plugin spaced:" not in p.stdout or "unspaced" in p.stdout:
        fail("'my pat.pat' must load that file")
    # Optional ops nested around a long chain: an error after a bounded number of steps (it
    # used to double per nesting level: depth 28 ran for days).
    nodes, prev = [], "x"
    for i in range(60):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])])
    chain = r.path("chain.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), chain)
    opt = r.path("opt28.pat")
    with open(opt, "w") as f:
        f.write("plugin expo\npattern p = " + "nn.relu?(" * 28 + "const" + ")" * 28 + "\n")
    p = r.run([r.relaxc, "compile", chain, "-o", r.path("chain.so"), "--pass-option",
               f"partition.patterns={opt}"], expect_rc=1, timeout=120)
    if "took more than 1000000 steps" not in p.stderr:
        fail("an exponential pattern match must end in an error")
    print("PASS: pattern names checked, file names kept, matching bounded")
    # No output may replace the model or another output.
    for args, needle in ((["-o", r.path("o1.so"), "--partition-graph", model], "is the input model"),
                         (["-o", r.path("o2.dot"), "--partition-graph", r.path("o2.dot")],
                          "is the output artifact")):
        p = r.run([r.relaxc, "compile", model, "--pass-option", f"partition.patterns={a}"] + args,
                  expect_rc=1)
        if needle not in p.stderr:
            fail(f"expected {needle!r}")
    print("PASS: --partition-graph cannot overwrite the model or the artifact")
    # The same table listed twice is one plugin.
    a = r.path("a_same.pat")
    with open(a, "w") as f:
        f.write("plugin same\npattern relu = nn.relu(*)\n")
    r.run([r.relaxc, "compile", model, "-o", r.path("same.so"), "--pass-option",
           f"partition.patterns={a},{a}"])


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", dest="relax_run", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    CASES[args.case](Runner(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
