"""The MSGS features and tasks by name (MSGS §3, Table 1; names as in the MSGS release).

Tasks: one unambiguous control task per feature (``<feature>_control``) and one
ambiguous task per linguistic × surface pair (``<linguistic>_<surface>``): 9 + 20.
"""

from __future__ import annotations

from dataclasses import dataclass

from .surface import SURFACE

LINGUISTIC = ("irregular_form", "syntactic_category", "control_raising", "main_verb")
FEATURES = LINGUISTIC + SURFACE

# MSGS Table 1: the question each feature asks, and its schematic positive / negative example.
DESCRIPTIONS = {
    "irregular_form": ("Morphology", "Does S have an irregular past verb?", "The cats slept.", "The cats meow."),
    "syntactic_category": ("Syn. category", "Does S have an adjective?", "Lincoln was tall.", "Lincoln was president."),
    "control_raising": ("Syn. construction", "Is S the control construction?", "Sue is eager to sleep.",
                        "Sue is likely to sleep."),
    "main_verb": ("Syn. position", "Is the main verb in \"ing\" form?", "Cats who eat mice are purring.",
                  "Cats who are eating mice purr."),
    "absolute_token_position": ("Absolute position", "Is the first token of S \"the\"?", "The cat chased a mouse.",
                                "A cat chased a mouse."),
    "length": ("Length", "Is S longer than n words?", "The cat chased a mouse.", "The cat meowed."),
    "lexical_content_the": ("Lexical content", "Does S contain \"the\"?", "That cat chased the mouse.",
                            "That cat chased a mouse."),
    "relative_token_position": ("Relative position", "Does \"the\" precede \"a\"?", "The cat chased a mouse.",
                                "A cat chased the mouse."),
    "title_case": ("Orthography", "Does S appear in title case?", "The Cat Chased a Mouse.", "The cat chased a mouse."),
}


@dataclass(frozen=True)
class Task:
    name: str
    kind: str  # control | ambiguous
    linguistic: str | None  # the linguistic feature (ambiguous, or a linguistic control)
    surface: str | None  # the surface feature (ambiguous, or a surface control)

    @property
    def feature(self) -> str | None:
        """The one feature of a control task."""
        return (self.linguistic or self.surface) if self.kind == "control" else None

    @property
    def controls(self) -> tuple[str, ...]:
        """Control tasks that gate this task (MSGS §5: a model must pass the control of each feature)."""
        if self.kind == "control":
            return ()
        return (f"{self.linguistic}_control", f"{self.surface}_control")


def parse_task(name: str) -> Task:
    """A task from its name; ValueError naming the unknown part."""
    if name.endswith("_control"):
        feat = name[: -len("_control")]
        if feat not in FEATURES:
            raise ValueError(f"unknown feature {feat!r} (known: {', '.join(FEATURES)})")
        return Task(name, "control", feat if feat in LINGUISTIC else None, feat if feat in SURFACE else None)
    for ling in LINGUISTIC:
        if name.startswith(ling + "_"):
            surf = name[len(ling) + 1:]
            if surf not in SURFACE:
                raise ValueError(f"unknown surface feature {surf!r} after {ling!r} (known: {', '.join(SURFACE)})")
            return Task(name, "ambiguous", ling, surf)
    for surf in SURFACE:
        if name.endswith("_" + surf):
            ling = name[: -len(surf) - 1]
            raise ValueError(f"unknown linguistic feature {ling!r} (known: {', '.join(LINGUISTIC)})")
    raise ValueError(
        f"unknown task {name!r}: expected <feature>_control or <linguistic>_<surface> with linguistic features "
        f"{', '.join(LINGUISTIC)} and surface features {', '.join(SURFACE)}"
    )


ALL_TASKS = tuple(f"{f}_control" for f in FEATURES) + tuple(f"{ling}_{s}" for ling in LINGUISTIC for s in SURFACE)


def resolve_tasks(tasks) -> list[Task]:
    """``"all"`` or a list of names -> tasks, each ambiguous task's two gating controls added, controls first."""
    names = list(ALL_TASKS) if tasks == "all" else list(tasks)
    parsed = [parse_task(n) for n in names]
    wanted = {t.name for t in parsed}
    for t in parsed:
        wanted.update(t.controls)
    return [parse_task(n) for n in ALL_TASKS if n in wanted]
