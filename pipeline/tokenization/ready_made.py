"""A ready-made tokenizer (the study's Llama-3 one, by hub id or local directory), taken as
it is: the same vocabulary, the same ids, the same tokens for any text.

Our objectives need roles a causal LM's tokenizer lacks (a mask, a pad, UL2's mode tokens,
span corruption's sentinels). The roles it names itself (Llama-3's ``<|begin_of_text|>``
and ``<|end_of_text|>``) keep their tokens; each other role takes one of its unused added
special tokens (Llama-3's ``<|reserved_special_token_K|>``), in id order, ``<mask>`` first:
Llama-3's first reserved token, id 128002, is the mask, as in the study's released models.
The roles are recorded as tokenizer attributes (``mask_token``, ``nlu_token``,
``extra_id_0_token``, ...), saved in ``tokenizer_config.json``, rather than by renaming
tokens: renaming ``<|begin_of_text|>`` to ``<s>`` would turn every ``<s>`` of web text into
a special token.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tokenizers import processors
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from pipeline.config import TokenizerSpec
from pipeline.errors import PipelineError
from pipeline.staging.manifest import verify_if_staged
from pipeline.tokenization.special_tokens import ROLE_TOKENS, sentinel, sentinel_role

# The order in which the roles a tokenizer lacks take its reserved tokens.
ROLE_ORDER = ("mask_token", "pad_token", "unk_token", "bos_token", "eos_token", "nlu_token", "nlg_token", "s2s_token")


def take_ready_made(
    spec: TokenizerSpec, where: str = "tokenizer.ready_made", embedding_rows: int | None = None
) -> tuple[PreTrainedTokenizerFast, dict[str, Any]]:
    """The tokenizer ``spec.ready_made`` names, with every role of ours on one of its tokens,
    and what provenance records of it: where it came from, its size, the sha256 of its
    serialized vocabulary, merges and rules as loaded, and which token plays which role.

    Its size must be ``spec.vocab_size``; or, for an imported model (``embedding_rows``: its
    embedding matrix's rows), at most that: a vocabulary padded to a round number of rows
    (Qwen2's 151,936 for 151,665 tokens) leaves rows no token reaches."""
    assert spec.ready_made is not None
    path = spec.ready_made.location
    check_local_path(path, f"{where}.path")
    if Path(path).is_dir() and spec.ready_made.artifact is None:
        verify_if_staged(path)  # a tokenizer read from the hub mirror: its files as staged (an artifact's: checked by its fetch)
    try:
        original = AutoTokenizer.from_pretrained(
            path, revision=spec.ready_made.revision, trust_remote_code=spec.ready_made.trust_remote_code
        )
    except (OSError, ValueError) as error:  # transformers: no such directory or hub id, no network, gated, remote code not trusted
        if "custom code" in str(error):
            trust = f"{where.removesuffix('.tokenizer')}.trust_remote_code"  # an outside model's own key, or tokenizer.ready_made's
            raise PipelineError(
                f"{where}.path: {path!r}'s tokenizer runs only with its repository's own code; set {trust}: true if you trust it"
            ) from None
        raise PipelineError(f"{where}.path: cannot load {path!r}: {str(error).strip().splitlines()[0]}") from None
    if not isinstance(original, PreTrainedTokenizerFast):
        raise PipelineError(f"{where}.path: {path!r} has no fast (Rust) tokenizer, which packing needs")
    if embedding_rows is not None and len(original) > embedding_rows:
        raise PipelineError(f"{where}: {path!r}'s tokenizer has {len(original)} tokens, its model {embedding_rows} embedding rows")
    if embedding_rows is None and len(original) != spec.vocab_size:
        raise PipelineError(f"tokenizer.vocab_size: {spec.vocab_size}, but {path!r} has {len(original)} tokens; set it to {len(original)}")
    roles = assign_roles(original, spec, where)
    backend = original.backend_tokenizer
    record = {
        "path": spec.ready_made.path,
        "artifact": spec.ready_made.artifact,
        "revision": spec.ready_made.revision,
        "vocab_size": len(original),
        "tokenizer_sha256": hashlib.sha256(backend.to_str().encode()).hexdigest(),
        "roles": {role: [token, backend.token_to_id(token)] for role, token in roles.items()},
    }
    # Fine-tuning frames one text <bos> text <eos>, whichever tokenizer; packing adds neither.
    backend.post_processor = processors.TemplateProcessing(
        single=f"{roles['bos_token']} $A {roles['eos_token']}",
        special_tokens=[(roles[role], backend.token_to_id(roles[role])) for role in ("bos_token", "eos_token")],
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, **roles), record


def check_local_path(path: str, where: str) -> None:
    """A path that names a directory (not a hub id of the form owner/name) must be one."""
    if path.startswith(("/", ".", "~")) and not Path(path).expanduser().is_dir():
        raise PipelineError(f"{where}: {path!r}: no such directory (a hub id has the form owner/name)")


def assign_roles(original: PreTrainedTokenizerFast, spec: TokenizerSpec, where: str) -> dict[str, str]:
    """Role attribute -> token: the tokenizer's own where it names one, as an attribute or as
    a special token of our name (a tokenizer made by this harness names them all; a pad that
    is its eos does not count: padding must not look like the end of a document), else the next
    unused added special token whose text holds ``spec.ready_made.reserved``."""
    assert spec.ready_made is not None
    specials = {token.content for token in original.added_tokens_decoder.values() if token.special}
    roles = {**{role: ROLE_TOKENS[role] for role in ROLE_ORDER}, **{sentinel_role(i): sentinel(i) for i in range(spec.num_sentinel_tokens)}}
    own: dict[str, str] = {}
    for role, our_name in roles.items():
        token = getattr(original, role, None) or (our_name if our_name in specials else None)
        if token and token not in own.values():
            own[role] = token
    wanted = [role for role in roles if role not in own]
    reserved = [
        token.content
        for _, token in sorted(original.added_tokens_decoder.items())
        if token.special and spec.ready_made.reserved in token.content and token.content not in own.values()
    ]
    if len(reserved) < len(wanted):
        raise PipelineError(
            f"{where}.reserved: {spec.ready_made.location!r} has {len(reserved)} unused special tokens containing "
            f"{spec.ready_made.reserved!r}, and {len(wanted)} roles need one (its missing roles and {spec.num_sentinel_tokens} sentinels)"
        )
    return {**own, **dict(zip(wanted, reserved))}
