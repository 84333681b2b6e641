"""Every file the benchmarks write goes through `replacing(path)`: a new file under an
unpredictable name in the destination's folder, created with O_CREAT | O_EXCL | O_NOFOLLOW and
renamed over `path` when the block ends, so a symlink planted at `path` (or at a temporary name)
is replaced, never written through (the same rule as relaxc's OutputFile, docs/design.md)."""
import contextlib
import os
import secrets


@contextlib.contextmanager
def replacing(path, mode="w"):
    """`with replacing(p) as f: f.write(...)`; mode "w" (text) or "wb". On an exception the
    temporary is removed and `path` is left as it was."""
    folder, name = os.path.split(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.tmp{secrets.token_hex(8)}")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"no unused temporary name for {path}")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path, text):
    with replacing(path) as f:
        f.write(text)
