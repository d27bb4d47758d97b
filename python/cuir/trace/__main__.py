"""python -m cuir.trace spec.py -o variant.mlir: the tracer's command line
(the same as python -m cuir.variant, without runpy's warning that the
package imported cuir.variant before running it)."""
import sys

from ..variant import main

sys.exit(main())
