"""Reading mechanisms from files other programs write: :mod:`.mjcf` (MJCF and URDF, through MuJoCo's compiler)."""
