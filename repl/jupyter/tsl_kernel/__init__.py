"""A Jupyter kernel for TSL: ipykernel's protocol machinery driving libtsl through its C API."""
