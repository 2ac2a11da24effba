"""Blackwell tensor-core unit (tcgen05, PTX 9.7.16) for the symexec machine.

- `tmem`: tensor memory (128 lanes x 512 columns of 32-bit cells per CTA) and its column allocator.
- `descriptors`: shared-memory matrix descriptors and instruction descriptors (decode, encode, checks).
- `ops`: value semantics: tcgen05.ld/st fragment maps, the MMA computation (a documented float64 model).
- `unit`: the machine handler for every `tcgen05.*` instruction.

Importing this package plugs the unit into the machine (symexec.units.register_unit): the layers
above symexec that run kernels (harness, volta) import it; symexec never imports it.
"""

from symexec.units import register_unit

from .unit import UNIT

register_unit(UNIT)
