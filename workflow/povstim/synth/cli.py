"""``povstim synth``: generate a synthetic source (text + gold CoNLL-U)."""

from __future__ import annotations

import json
import logging

from ..io import PovstimError, json_object_arg
from ..sources.spec import source_spec
from .generator import write_corpus

log = logging.getLogger("povstim.synth")


def add_arguments(p) -> None:
    p.description = (
        "Generate a synthetic English corpus from a seeded probabilistic grammar: one sentence per "
        "line in --out-text and the gold UD parse of every line in --out-conllu (with '# dpe = ...' "
        "labels). Settings come from --params (a source's config mapping, as the pipeline passes it) "
        "and/or the explicit flags, which override it."
    )
    p.add_argument("--params", metavar="JSON",
                   help="the source's config mapping, e.g. "
                        "'{\"kind\": \"synthetic\", \"register\": \"child\", \"sentences\": 40000, \"seed\": 11, "
                        "\"dpe_rate\": {\"question_formation\": 0.01, \"binding\": 0.005}}'")
    p.add_argument("--register", choices=["child", "adult"], help="child-directed or adult-written register")
    p.add_argument("--sentences", type=int, help="number of sentences (lines) to generate")
    p.add_argument("--seed", type=int, help="random seed (default: the schema's, 0)")
    p.add_argument("--dpe-rate", metavar="JSON",
                   help='share of sentences that are DPE per phenomenon, e.g. \'{"question_formation": 0.01}\'')
    p.add_argument("--out-text", required=True, help="output text file, one sentence per line")
    p.add_argument("--out-conllu", required=True, help="output gold CoNLL-U file, one block per line of --out-text")


def resolve(args) -> dict:
    """The synthetic source's spec: --params, overridden by the flags, checked and defaulted by the schema."""
    spec = json_object_arg(args.params, "--params")
    spec.setdefault("kind", "synthetic")
    if spec["kind"] != "synthetic":
        raise PovstimError(f"--params: kind is {spec['kind']!r}; povstim synth only makes 'synthetic' sources")
    for key, value in (("register", args.register), ("sentences", args.sentences), ("seed", args.seed)):
        if value is not None:
            spec[key] = value
    if args.dpe_rate:
        spec["dpe_rate"] = json_object_arg(args.dpe_rate, "--dpe-rate")
    for key in ("register", "sentences"):
        if key not in spec:
            raise PovstimError(f"synth: no {key} given (use --{key} or put it in --params)")
    return source_spec("synthetic", spec)


def run(args) -> int:
    spec = resolve(args)
    summary = write_corpus(spec["register"], spec["sentences"], int(spec["seed"]),
                           spec.get("dpe_rate"), args.out_text, args.out_conllu)
    log.info("synth: %s", json.dumps(summary, sort_keys=True))
    return 0
