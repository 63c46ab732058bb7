"""An LSTM language model as a transformers model, so the training loop, the scorer and the Auto classes take it.

The model is an embedding, a stack of ``n_layer`` one-layer LSTMs (``n_embd`` in, ``n_hidden`` out; dropout
between layers), and a linear output layer over the vocabulary. With ``tie_weights`` the output layer shares
the embedding matrix; when ``n_hidden`` differs from ``n_embd`` a bias-free projection ``n_hidden -> n_embd``
sits before it (Press & Wolf 2017's tied LSTMs need the two sizes equal; the projection makes them so). Untied,
the output layer reads the last LSTM's states directly.

Each layer is its own ``nn.LSTM`` (not one ``nn.LSTM(num_layers=n)``) so the dropout between layers is an
``nn.Dropout`` drawn from torch's generator, which a checkpoint restores: a resumed run gives the same weights
on a GPU too (cuDNN's multi-layer LSTM keeps its own dropout state). The numbers are those of
``nn.LSTM(num_layers=n)`` with the same weights (tests/test_lstm.py compares to a plain-PyTorch reference).

Causal by construction: padding after a row's last real token (the scorer's right padding) changes nothing
before it, so ``attention_mask`` is accepted and not needed. Left padding would feed padding into the state:
povstim never pads on the left.

Saved models load with ``AutoModelForCausalLM.from_pretrained`` after :func:`register_auto` (the scorer calls
``povstim.families.register_auto_classes``)::

    from povstim import families
    families.register_auto_classes()
    model = AutoModelForCausalLM.from_pretrained(folder)
"""

from __future__ import annotations

from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput, CausalLMOutput

MODEL_TYPE = "povstim-lstm"


class LSTMConfig(PretrainedConfig):
    model_type = MODEL_TYPE
    attribute_map = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer"}

    def __init__(self, vocab_size: int = 2048, n_embd: int = 128, n_hidden: int = 256, n_layer: int = 2,
                 tie_word_embeddings: bool = True, dropout: float = 0.0, init_range: float = 0.1, **kwargs):
        self.vocab_size = int(vocab_size)
        self.n_embd, self.n_hidden, self.n_layer = int(n_embd), int(n_hidden), int(n_layer)
        self.dropout = float(dropout)
        self.init_range = float(init_range)
        super().__init__(tie_word_embeddings=bool(tie_word_embeddings), **kwargs)

    @property
    def n_out(self) -> int:
        """Size of the states the output layer reads: n_embd when tied (after the projection), else n_hidden."""
        return self.n_embd if self.tie_word_embeddings else self.n_hidden


class LSTMPreTrainedModel(PreTrainedModel):
    config_class = LSTMConfig
    base_model_prefix = "model"

    def _init_weights(self, module):
        """Embedding and output layer uniform in ±init_range (Zaremba et al.), LSTMs and the projection as
        PyTorch initialises them, output bias 0."""
        r = self.config.init_range
        if isinstance(module, nn.Embedding):
            nn.init.uniform_(module.weight, -r, r)
        elif isinstance(module, nn.LSTM):
            module.reset_parameters()
        elif isinstance(module, nn.Linear):
            if module.out_features == self.config.vocab_size:
                nn.init.uniform_(module.weight, -r, r)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            else:
                module.reset_parameters()


class LSTMModel(LSTMPreTrainedModel):
    """The body: embedding, LSTMs, (tied: projection); ``last_hidden_state`` is what the output layer reads."""

    def __init__(self, config: LSTMConfig):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.n_embd)
        self.layers = nn.ModuleList(
            nn.LSTM(config.n_embd if i == 0 else config.n_hidden, config.n_hidden, batch_first=True)
            for i in range(config.n_layer))
        # no dropout module at p = 0: a training-mode dropout call still costs a pass over the activations
        self.drop = nn.Dropout(config.dropout) if config.dropout > 0 else nn.Identity()
        tied_proj = config.tie_word_embeddings and config.n_hidden != config.n_embd
        self.proj = nn.Linear(config.n_hidden, config.n_embd, bias=False) if tied_proj else None
        self.post_init()

    def get_input_embeddings(self):
        return self.embed

    def set_input_embeddings(self, value):
        self.embed = value

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, **kwargs):
        h = self.drop(self.embed(input_ids) if inputs_embeds is None else inputs_embeds)
        for layer in self.layers:
            h, _ = layer(h)
            h = self.drop(h)
        if self.proj is not None:
            h = self.proj(h)
        return BaseModelOutput(last_hidden_state=h)


class LSTMForCausalLM(LSTMPreTrainedModel):
    _tied_weights_keys = {"lm_head.weight": "model.embed.weight"}

    def __init__(self, config: LSTMConfig):
        super().__init__(config)
        self.model = LSTMModel(config)
        self.lm_head = nn.Linear(config.n_out, config.vocab_size, bias=True)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.embed

    def set_input_embeddings(self, value):
        self.model.embed = value

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, value):
        self.lm_head = value

    def forward(self, input_ids=None, attention_mask=None, labels=None, position_ids=None, inputs_embeds=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        hidden = self.model(input_ids=input_ids, inputs_embeds=inputs_embeds).last_hidden_state
        logits = self.lm_head(hidden)
        loss = None
        if labels is not None:  # transformers' convention: labels are the inputs, shifted here
            loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)).float(),
                                               labels[:, 1:].reshape(-1), ignore_index=-100)
        return CausalLMOutput(loss=loss, logits=logits)


def register_auto() -> None:
    """Register ``povstim-lstm`` with AutoConfig / AutoModel / AutoModelForCausalLM (idempotent)."""
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    AutoConfig.register(MODEL_TYPE, LSTMConfig, exist_ok=True)
    AutoModel.register(LSTMConfig, LSTMModel, exist_ok=True)
    AutoModelForCausalLM.register(LSTMConfig, LSTMForCausalLM, exist_ok=True)


def build_config(arch: dict, dropout: float, vocab_size: int, ids: dict) -> LSTMConfig:
    return LSTMConfig(vocab_size=vocab_size, n_embd=arch["n_embd"], n_hidden=arch["n_hidden"],
                      n_layer=arch["n_layer"], tie_word_embeddings=arch["tie_weights"], dropout=dropout,
                      bos_token_id=ids["bos"], eos_token_id=ids["eos"], pad_token_id=ids["pad"])

