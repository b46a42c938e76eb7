"""python -m tsl_kernel -f CONNECTION_FILE: what the kernel spec (kernel.json) starts."""
from ipykernel.kernelapp import IPKernelApp

from .kernel import TslKernel

IPKernelApp.launch_instance(kernel_class=TslKernel)
