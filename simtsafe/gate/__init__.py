"""The CI gate: ``simtsafe check`` / ``simtsafe audit`` and ``simtsafe.check_kernel``.

``_modules`` finds and imports the user's modules (dotted names inside
packages, fresh imports); ``_gate`` takes every kernel and helper made while
they were imported (``decoration._registry``), compiles each kernel to PTX
for every dtype binding it admits (so every typing rule and the
compiled-form checks run on every line), and scans the sources for raw
launches outside ``simtsafe.unsafe``. Above the composed kernel objects
(it compiles them), below the command line.
"""
