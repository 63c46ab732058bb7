"""``povstim synth``: generate a synthetic source (text + gold CoNLL-U)."""

from __future__ import annotations

import json
import logging

from ..io import PovstimError

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
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--dpe-rate", metavar="JSON",
                   help='share of sentences that are DPE per phenomenon, e.g. \'{"question_formation": 0.01}\'')
    p.add_argument("--out-text", required=True, help="output text file, one sentence per line")
    p.add_argument("--out-conllu", required=True, help="output gold CoNLL-U file, one block per line of --out-text")


def _json(value: str, flag: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise PovstimError(f"{flag}: not valid JSON ({exc.msg} at column {exc.colno}): {value!r}") from None


def resolve(args) -> dict:
    spec = _json(args.params, "--params") if args.params else {}
    if not isinstance(spec, dict):
        raise PovstimError("--params must be a JSON object (a source's config mapping)")
    if spec.get("kind", "synthetic") != "synthetic":
        raise PovstimError(f"--params: kind is {spec['kind']!r}; povstim synth only makes 'synthetic' sources")
    known = {"kind", "register", "sentences", "seed", "dpe_rate"}
    extra = sorted(set(spec) - known)
    if extra:
        raise PovstimError(f"--params: unknown key {extra[0]!r} for a synthetic source (known: {', '.join(sorted(known))})")
    if args.register:
        spec["register"] = args.register
    if args.sentences is not None:
        spec["sentences"] = args.sentences
    if args.seed is not None:
        spec["seed"] = args.seed
    if args.dpe_rate:
        spec["dpe_rate"] = _json(args.dpe_rate, "--dpe-rate")
    for key in ("register", "sentences"):
        if key not in spec:
            raise PovstimError(f"synth: no {key} given (use --{key} or put it in --params)")
    if not isinstance(spec["sentences"], int) or isinstance(spec["sentences"], bool):
        raise PovstimError(f"synth: sentences must be an integer, got {spec['sentences']!r}")
    if not isinstance(spec.get("dpe_rate", {}), dict):
        raise PovstimError("synth: dpe_rate must be a mapping phenomenon -> rate")
    return spec


def run(args) -> int:
    from .generator import write_corpus

    spec = resolve(args)
    summary = write_corpus(spec["register"], spec["sentences"], int(spec.get("seed", 0)),
                           spec.get("dpe_rate"), args.out_text, args.out_conllu)
    log.info("synth: %s", json.dumps(summary, sort_keys=True))
    return 0
