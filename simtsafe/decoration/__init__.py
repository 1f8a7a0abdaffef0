"""Decoration: what ``@simtsafe.kernel`` / ``@simtsafe.device`` read, check and rewrite.

The declarations (``_declaration``) read the annotations (``_params``),
resolve every name the function refers to against the allow-list
(``_policy``), check the source rules and rewrite it (``_rewrite``) into the
function that ``simtsafe.lowering`` compiles; ``_registry`` records every
kernel and helper made, for the gate. Imports only ``lowering`` and the
shared vocabulary: compiling and launching are the composed objects'
(``simtsafe._compose``), which sit above this part and subclass its
declarations.
"""
