"""What `vulture workflow/povstim vulture_whitelist.py --min-confidence 60` would call unused, and why it is kept.

vulture reads only the package: it does not see the Snakefile, rules/*.smk, scripts/ or tests/, nor the
attributes and hooks that libraries (argparse, transformers, tokenizers, torch, numpy, spaCy, json) read.
Every name below is used by one of those; a name nothing uses is deleted, not listed here
(tests/test_house.py runs the command and expects no output).
"""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# ---- attributes libraries read
_.formatter_class  # argparse: every command's parser sets it (help text layout)
_.scan_once  # json: the decoder's scanner hook (benchmarks/norms.py: line numbers in JSON errors)
_.__class__  # biases/recency.py swaps each attention module's class in place
_.__qualname__  # constructions/library.py names each generated rule function
_.is_sent_start  # spaCy: parse/backends.py keeps a line one sentence
_.writeable  # numpy: train/data.py freezes its cached vocabulary tables
_.allow_tf32  # torch: train/runtime.py's training.tf32 switch
_.normalizer  # tokenizers: tokenizer/bpe.py's normaliser
_.pre_tokenizer  # tokenizers: tokenizer/bpe.py's pre-tokeniser
_.post_processor  # tokenizers: tokenizer/bpe.py's special-token template
_.num_labels  # transformers: probes/finetune.py's two-class sequence-classification head

# ---- transformers hooks of the LSTM family (lstm.py) and the recency GPT-2 (biases/recency.py)
attribute_map  # PretrainedConfig maps hidden_size/num_hidden_layers to the LSTM's own names
config_class  # PreTrainedModel: the config class the Auto classes load
base_model_prefix  # PreTrainedModel: the attribute that holds the base model
_._init_weights  # PreTrainedModel: post_init() initialises every module through it
_.set_input_embeddings  # PreTrainedModel: resize_token_embeddings() calls it
_.get_output_embeddings  # PreTrainedModel: tie_weights() and generation call it
_.set_output_embeddings  # PreTrainedModel: resize_token_embeddings() calls it
output_attentions  # forward() keywords transformers passes to every causal LM
output_hidden_states  # forward() keyword transformers passes
return_dict  # forward() keyword transformers passes
use_cache  # forward() keyword transformers passes; also codehash.use_cache, called by rules/common.smk

# ---- settings fields: settings.build fills every key of the schema section
multiple_choice  # scoring/run.py ScoringSettings: the scoring.multiple_choice section (read by scoring/tasks.py)
completion  # scoring/run.py ScoringSettings: the scoring.completion section (read by scoring/tasks.py)

# ---- called by name through a registry or getattr
linear_rule  # conditions/variants.py: @register("question_formation", ...), a replace operation's variant
wrong_antecedent  # conditions/variants.py: @register("binding", ...)
anan  # conditions/variants.py: @register("aann", ...)
naan  # conditions/variants.py: @register("aann", ...)
_.c_decl_intrans  # synth/constructions.py: synth/generator.py calls getattr(g, f"c_{name}")
_.c_decl_trans  # synth construction (getattr c_<name>)
_.c_decl_cop  # synth construction (getattr c_<name>)
_.c_deictic  # synth construction (getattr c_<name>)
_.c_ccomp  # synth construction (getattr c_<name>)
_.c_whether  # synth construction (getattr c_<name>)
_.c_percep  # synth construction (getattr c_<name>)
_.c_objrel  # synth construction (getattr c_<name>)
_.c_subjrel  # synth construction (getattr c_<name>)
_.c_participial  # synth construction (getattr c_<name>)
_.c_refl  # synth construction (getattr c_<name>)
_.c_wanna  # synth construction (getattr c_<name>)
_.c_want_to  # synth construction (getattr c_<name>)
_.c_poss  # synth construction (getattr c_<name>)
_.c_adjunct  # synth construction (getattr c_<name>)
_.c_adjunct_fin  # synth construction (getattr c_<name>)
_.c_coord  # synth construction (getattr c_<name>)
_.c_ynq  # synth construction (getattr c_<name>)
_.c_ynq_cop  # synth construction (getattr c_<name>)
_.c_whq_obj  # synth construction (getattr c_<name>)
_.c_want_q  # synth construction (getattr c_<name>)
_.c_whq_subj  # synth construction (getattr c_<name>)
_.c_whq_adv  # synth construction (getattr c_<name>)
_.c_whq_long  # synth construction (getattr c_<name>)
_.c_wanna_q  # synth construction (getattr c_<name>)
_.c_q_objrel  # synth construction (getattr c_<name>)
_.c_q_embedded_rel  # synth construction (getattr c_<name>)
_.c_imp  # synth construction (getattr c_<name>)
_.c_imp_refl  # synth construction (getattr c_<name>)
_.dpe_question_formation  # synth/generator.py calls getattr(g, f"dpe_{phenomenon}")
_.dpe_binding  # synth/generator.py calls getattr(g, f"dpe_{phenomenon}")

# ---- called by the Snakefile (run guards, warm start, prewarm, report)
SUITE_WAIT_S  # analysis/models/prewarm.py: the Snakefile's prewarm wait
launch  # analysis/models/prewarm.py: the Snakefile starts the prewarm
enabled  # warm.py: whether the Snakefile starts the warm-start server
job_environment  # devices/threads.py: the Snakefile's job environment
report_evidence  # analysis/tables/conditions_page.py: the report's "what BABY got back" text
report_target  # preflight/runs.py: Snakefile run guard
check_report_path  # preflight/runs.py: Snakefile run guard
write_record  # preflight/runs.py: Snakefile run guard
overwrite_warning  # preflight/runs.py: Snakefile run guard
pause_before_replacing  # preflight/runs.py: Snakefile run guard
dry_run  # preflight/runs.py: Snakefile run guard
record_run  # preflight/runs.py: Snakefile run guard
forget_dead_runs  # preflight/runs.py: Snakefile run guard
explain_lock_refusals  # preflight/runs.py: Snakefile run guard
stale_lock_hint  # preflight/runs.py: Snakefile run guard
missing_lines  # preflight/runs.py: Snakefile end-of-run summary
guardrail_lines  # preflight/runs.py: Snakefile end-of-run summary
watch_interrupts  # preflight/runs.py: Snakefile tells a Ctrl-C from a failed job
end_line  # preflight/runs.py: Snakefile end-of-run line
report_filter  # plan.py: the Snakefile's report description
gpu_notes  # plan.py: the Snakefile's start-up notes
precision_notes  # plan.py: the Snakefile's start-up notes

# ---- called by rules/*.smk (DAG targets, params, resources, code hashes)
corpus_model_order  # plan.py: rules/evaluate.smk
assemble_unit_args  # plan.py: rules/corpus.smk
norms_suites  # plan.py: rules/analysis.smk
suite_files_hash  # plan.py: rules/evaluate.smk
analysis_archs  # plan.py: rules/analysis.smk
suite_build_spec  # plan.py: rules/evaluate.smk
slor_corpora  # plan.py: rules/evaluate.smk
external_models  # plan.py: rules/common.smk
external_model_flags  # plan.py: rules/evaluate.smk
baseline_scores  # plan.py: rules/common.smk
train_gpus  # plan.py: rules/train.smk, rules/biases.smk
train_threads  # plan.py: rules/train.smk, rules/biases.smk
parse_gpus  # plan.py: rules/filter.smk
score_gpus  # plan.py: rules/evaluate.smk
needs_trees  # conditions/operations.py: rules/common.smk, rules/dose.smk
comparison_targets  # constructions/delta.py: rules/analysis.smk
spec_hash  # constructions/library.py: rules/filter.smk
surface_hash  # dpe/registry.py: rules/filter.smk
condition_filter  # filter/settings.py: rules/filter.smk
study_corpora  # tokenizer/study.py: rules/train.smk
dyck_plan  # train/bias_plan.py: rules/biases.smk
word_checkpoints_wanted  # train/params.py: rules/analysis.smk
tokenizer_corpora  # plan.py: rules/train.smk (the corpora a size's tokenizer is trained on)
tokenizer_params  # plan.py: rules/train.smk
void_definition_of  # plan.py: rules/filter.smk (a condition's void-by-definition record)
report_description  # plan.py: the Snakefile's report description (what the run filtered and put back)

# ---- called by scripts/
default_lexicon  # benchmarks/words.py: scripts/gpu_bench.py, scripts/speed_score_model.py (and the tests' suites)
markdown  # filter/labelled.py: scripts/french_filter_labels.py
compare_finished  # preflight/forecast_check.py: scripts/speed_forecast.py, scripts/forecast_benchmark.py
render_table  # preflight/forecast_check.py: scripts/forecast_benchmark.py
_.examples_per_s  # probes/finetune.py: scripts/speed_probes.py

# ---- called by tests/, kept in the package for a reason
stage_hashes  # codehash.py: tests/test_codehash.py hashes every stage at once (each file looked at once)
computed_imports  # codehash.py: tests/test_codehash.py fails on a new computed import (a hole in the code hash)
release_gpu  # devices/slots.py: gives the claimed slot back in-process (tests/test_devices.py; a job's exit does it)
tree_errors  # synth/gold.py is the independent oracle tests/test_synth.py checks the generator against
text_of  # synth/gold.py: the oracle's text rebuilt from the tree (tests/test_synth.py)
_.eager_steps  # train/gpu.py StepGraphs counter: tests/test_step_graphs.py checks what was replayed
_.replays  # train/gpu.py StepGraphs counter: tests/test_step_graphs.py, tests/test_train_gpu.py
