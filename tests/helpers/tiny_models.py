"""Build small real models (tokenizer trained with ``tokenizers``, random or
briefly trained weights) saved as HF folders: for tests and the scoring
benchmark script, which must not download anything.
"""

from __future__ import annotations

from pathlib import Path


def train_tokenizer(sentences: list[str], kind: str, vocab_size: int = 512):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if kind == "causal":
        specials = ["<|endoftext|>"]
    else:
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(sentences, trainer=trainer)
    if kind == "causal":
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                       unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", mask_token="<mask>", cls_token="<s>", sep_token="</s>")


def build(out_dir: str | Path, sentences: list[str], kind: str = "causal", vocab_size: int = 512,
          layers: int = 2, hidden: int = 64, heads: int = 2, ffn: int | None = None, positions: int = 128,
          seed: int = 0, train_steps: int = 0, lr: float = 3e-3, batch_size: int = 16):
    """Save a GPT2LMHeadModel (causal) or RobertaForMaskedLM (masked) with its tokenizer to ``out_dir``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(seed)
    tok = train_tokenizer(sentences, kind, vocab_size)
    ffn = ffn or 4 * hidden
    if kind == "causal":
        cfg = GPT2Config(vocab_size=len(tok), n_positions=positions, n_embd=hidden, n_layer=layers, n_head=heads,
                         n_inner=ffn, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT2LMHeadModel(cfg)
    else:
        cfg = RobertaConfig(vocab_size=len(tok), max_position_embeddings=positions + 2, hidden_size=hidden,
                            num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=ffn,
                            pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                            eos_token_id=tok.eos_token_id, hidden_dropout_prob=0.0,
                            attention_probs_dropout_prob=0.0)
        model = RobertaForMaskedLM(cfg)
    if train_steps:
        _train(model, tok, sentences, kind, train_steps, lr, batch_size, seed)
    model.eval()
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir


def _train(model, tok, sentences, kind, steps, lr, batch_size, seed, window: int = 24):
    """A few optimizer steps. Causal: random windows of the EOS-joined corpus
    (GPT-2-style packing, so a window may start anywhere, a sentence start
    included); masked: whole sentences with 15% of tokens masked."""
    import torch

    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    if kind == "causal":
        stream = []
        for x in tok(sentences, add_special_tokens=False)["input_ids"]:
            stream += [tok.eos_token_id] + x
        stream = torch.tensor(stream)
        window = min(window, len(stream) - 1)
    else:
        enc = tok(sentences)["input_ids"]
    for _ in range(steps):
        if kind == "causal":
            starts = torch.randint(len(stream) - window, (batch_size,), generator=g)
            ids = torch.stack([stream[s : s + window] for s in starts.tolist()])
            att = torch.ones_like(ids)
            labels = ids
        else:
            rows = [enc[i] for i in torch.randint(len(enc), (batch_size,), generator=g).tolist()]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), tok.pad_token_id)
            att = torch.zeros_like(ids)
            for r, x in enumerate(rows):
                ids[r, : len(x)] = torch.tensor(x)
                att[r, : len(x)] = 1
            special = torch.tensor([tok.bos_token_id, tok.eos_token_id, tok.pad_token_id])
            choose = (torch.rand(ids.shape, generator=g) < 0.15) & ~torch.isin(ids, special)
            labels = ids.masked_fill(~choose, -100)
            ids = ids.masked_fill(choose, tok.mask_token_id)
        loss = model(input_ids=ids, attention_mask=att, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def causal_and_masked(root: str | Path, sentences: list[str], train_steps: int = 0, **kw) -> dict:
    """{"causal": a GPT-2 folder (seed 1, trained ``train_steps``), "masked": a RoBERTa folder (seed 2)}, both on
    ``sentences``: the pair of models the scoring tests compare scorers on (``kw``: sizes, as for build)."""
    root = Path(root)
    return {"causal": build(root / "gpt2", sentences, "causal", seed=1, train_steps=train_steps, **kw),
            "masked": build(root / "roberta", sentences, "masked", seed=2, **kw)}


def tiny_corpus(d, tokenizer: dict | None = None):
    """A 400-sentence train, 40-sentence dev split and a 300-token BPE tokenizer in ``d`` (the training tests');
    ``tokenizer``: more of the tokenizer section's keys."""
    from povstim.tokenizer import bpe
    from test_tokenizer import write_corpus

    train = write_corpus(d / "train.txt", 400, seed=1)
    dev = write_corpus(d / "dev.txt", 40, seed=2)
    bpe.save(bpe.train_file(train, {"vocab_size": 300, **(tokenizer or {})}), d / "tokenizer.json")
    return {"train": str(train), "dev": str(dev), "tokenizer": str(d / "tokenizer.json")}


# A handful of binding and wanna minimal pairs in one small suite: the external-model and BabyLM-export tests
# score them (one place for the sentences both use).
MINI_PAIR_TEXTS = [
    ("binding", "The girl said that Tom likes himself.", "The girl said that Tom likes herself."),
    ("binding", "The boy saw himself.", "The boy saw herself."),
    ("wanna", "Who does Mary wanna see?", "Who does Mary wanna go?"),
    ("wanna", "What does Tom wanna eat?", "What does Tom wanna sleep?"),
]


def mini_pairs(extra: list[tuple[str, str, str]] = ()) -> list[dict]:
    """The pairs as scoring rows (suite "mini", item ids in order), with ``extra`` ones after."""
    return [{"suite": "mini", "paradigm": p, "category": "c", "item_id": str(i), "good": g, "bad": b}
            for i, (p, g, b) in enumerate([*MINI_PAIR_TEXTS, *extra])]
