"""povstim: corpora -> language models -> poverty-of-the-stimulus results.

Each stage lives in its own subpackage with a ``cli`` module that the
``povstim`` command line (and therefore every Snakemake rule) calls.
"""

__version__ = "0.1.0"
