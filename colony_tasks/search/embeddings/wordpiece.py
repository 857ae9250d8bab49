"""BERT uncased WordPiece in plain Python, for a few ASCII texts without ``tokenizers``.

A search embeds one query. Loading the Hugging Face tokenizer for it costs more than the rest of
the query (importing the library and parsing ``tokenizer.json`` take ~25 ms, a fifth of a CLI
search), so the static embedder tokenises a small batch of ASCII texts here and keeps
``tokenizers`` for bulk embedding and other scripts. Both give the same ids;
``tests/search/test_wordpiece.py`` checks that they do.

Implements exactly what the shipped ``tokenizer.json`` declares, and refuses any other
configuration (:meth:`WordPiece.from_tokenizer_json` returns None): added tokens matched in the
raw text, then ``BertNormalizer`` (clean text, lowercase; on ASCII text nothing else applies),
``BertPreTokenizer`` (split on whitespace, isolate punctuation) and greedy longest-match-first
``WordPiece`` with a ``##`` continuation prefix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
EXPECTED = {
    "normalizer": {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    },
    "pre_tokenizer": {"type": "BertPreTokenizer"},
}


# ASCII control characters BertNormalizer drops (\t, \n and \r become spaces instead).
_CLEAN: dict[int, str | None] = {code: None for code in (*range(0x20), 0x7F)}
_CLEAN.update({ord("\t"): " ", ord("\n"): " ", ord("\r"): " "})


def _normalize(text: str) -> str:
    """BertNormalizer on ASCII text: drop control characters, whitespace to spaces, lowercase.

    (An ASCII text has no accents to strip and no CJK ideographs to pad.)
    """
    return text.translate(_CLEAN).lower()


def _words(text: str) -> list[str]:
    """BertPreTokenizer: split on whitespace, each punctuation character a word of its own."""
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for i, char in enumerate(chunk):
            if char in ASCII_PUNCTUATION:
                if i > start:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPiece:
    """Token ids of texts, as ``Tokenizer.encode(text, add_special_tokens=False).ids`` gives."""

    def __init__(
        self,
        vocab: dict[str, int],
        *,
        unk_token: str,
        prefix: str,
        max_word_chars: int,
        added: dict[str, int],
        max_tokens: int,
    ) -> None:
        self.vocab = vocab
        self.unk = vocab[unk_token]
        self.prefix = prefix
        self.max_word_chars = max_word_chars
        self.max_tokens = max_tokens
        self.added = added
        # Longest first, so an added token that contains another wins, as in tokenizers.
        names = sorted(added, key=len, reverse=True)
        self._added_re = re.compile("|".join(re.escape(n) for n in names)) if names else None

    @classmethod
    def from_tokenizer_json(cls, path: Path, *, max_tokens: int) -> WordPiece | None:
        """The tokenizer ``path`` describes, or None if it is not the configuration above."""
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        model = spec.get("model") or {}
        if any(spec.get(key) != value for key, value in EXPECTED.items()):
            return None
        if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
            return None
        added = {t["content"]: t["id"] for t in spec.get("added_tokens") or []}
        if any(
            t.get("normalized") or t.get("lstrip") or t.get("rstrip") or t.get("single_word")
            for t in spec.get("added_tokens") or []
        ):
            return None
        vocab = model["vocab"]
        unk = model.get("unk_token", "[UNK]")
        if unk not in vocab:
            return None
        return cls(
            vocab,
            unk_token=unk,
            prefix=model.get("continuing_subword_prefix", "##"),
            max_word_chars=int(model.get("max_input_chars_per_word", 100)),
            added=added,
            max_tokens=max_tokens,
        )

    def ids(self, text: str) -> list[int]:
        """The ids of the ASCII ``text``, without special tokens, at most ``max_tokens``.

        Only ASCII: beyond it, Python's Unicode tables and the ones ``tokenizers`` was built
        with disagree on some characters (unassigned in one, a letter in the other).
        """
        if not text.isascii():
            raise ValueError("WordPiece.ids() takes ASCII text; use tokenizers for the rest")
        out: list[int] = []
        start = 0
        matches = self._added_re.finditer(text) if self._added_re is not None else ()
        for match in matches:
            self._plain(text[start : match.start()], out)
            out.append(self.added[match.group()])
            start = match.end()
        self._plain(text[start:], out)
        return out[: self.max_tokens]

    def _plain(self, text: str, out: list[int]) -> None:
        if not text:
            return
        for word in _words(_normalize(text)):
            self._word(word, out)

    def _word(self, word: str, out: list[int]) -> None:
        """Greedy longest-match-first pieces of one word; the whole word is unknown if any is."""
        if len(word) > self.max_word_chars:
            out.append(self.unk)
            return
        vocab, pieces, start = self.vocab, [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                out.append(self.unk)
                return
            pieces.append(found)
            start = end
        out.extend(pieces)
