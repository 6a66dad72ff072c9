"""Reading mechanisms from files other programs write: :mod:`.mjcf` (MJCF and URDF, through MuJoCo's compiler)."""


def model_file_key(path: str) -> tuple[str, str]:
    """(full path, sha256 of the contents) of a model file, the key its reader is cached by: a file rewritten
    within one tick of the file system's clock keeps its modification time, never its contents. ValueError
    for a missing file."""
    import hashlib
    import os

    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise ValueError(f"model file {path!r} does not exist")
    with open(full, "rb") as f:
        return full, hashlib.sha256(f.read()).hexdigest()
