"""Hash-blocked TSDF fusion on simtsafe, every kernel Tier 1 (issue 19).

Modules: ``scene`` (the analytic scene, the camera path, synthetic depth frames),
``volume`` (blocks, 64-bit keys, parameters), ``kernels`` (the Tier-1 kernels:
allocate, integrate, raycast), ``raw`` (their raw ``numba.cuda.jit`` twins),
``reference`` (the numpy reference), ``fusion`` (the device volume and its launches),
``run`` (the command line). ``run()`` below is the entry of ``examples/run_all.py``.
"""
