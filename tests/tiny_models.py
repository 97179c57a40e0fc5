"""Tiny random neural models built on disk (no download): their vocabularies and tokenizers."""

from __future__ import annotations

#: the vocabulary of the tiny duoT5 model
DUOT5_WORDS = ("flu fever cough heart pain drug dose sleep tax car tree query document0 document1 relevant true "
               "false").split()


TRANSFORMERS_MISSING = "transformers/torch/tokenizers not installed (extra 'neural')"


def save_tokenizer(directory, *, bert: bool):
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if bert else ["<pad>", "</s>", "<unk>"]
    vocab = {token: i for i, token in enumerate([*special, *NEURAL_WORDS, ":"])}
    core = Tokenizer(models.WordLevel(vocab, unk_token=special[1] if bert else "<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(" ", "removed") if not bert else pre_tokenizers.Whitespace()
    if bert:
        core.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
        fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                                    cls_token="[CLS]", sep_token="[SEP]")
    else:
        core.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
        fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>",
                                                    unk_token="<unk>")
    fast.save_pretrained(directory)
    return len(vocab)


NEURAL_WORDS = "flu fever cough heart pain drug dose sleep tax car tree query document relevant true false".split()
