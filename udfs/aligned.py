"""The model-free 'aligned' processor (SPEC section 6): output text -> reference words.

An output sentence is turned into syntactic words the way its treebank tokenizes, without a
model, and each word is mapped to a reference word of the same sentence:

1. The text is put in Unicode NFC and split at any Unicode whitespace (``str.split()``).
   Forms are compared by ``key``: NFC, then casefold (so STRASSE = Straße).
2. Chunks that together spell a form of the reference sentence with a space inside
   (``1 000``) are joined first, when they start and end at word boundaries.
3. A chunk of the reference's own text is cut where the treebank cuts it (k-th such chunk
   like the k-th in the reference). Another chunk that is a form of the sentence (a surface
   token or a syntactic word) is one piece. Any other chunk is cut into the pieces with the
   fewest pieces not taken from the sentence, then the fewest pieces (the longest matches),
   the longest first piece on a tie. A piece is a form of the sentence, a form of the corpus
   that has a punctuation character or is a multiword token, one punctuation character, or a
   run of other characters; a run of letters is cut only next to a piece with punctuation
   (did|n't, never to|get|her). "Punctuation" is Unicode P or S here. (A corpus form without
   punctuation can never beat the single run, so only those forms are passed.)
4. Pieces become syntactic words. The k-th piece with a form reads as the k-th surface token
   of the sentence with that form: a multiword token expands into the sentence's own words
   (``du`` -> de le). Multiword readings the output already spells out (its words are
   there beyond the sentence's standalone ones: pre-tokenized output) are not expanded
   again, so ``des`` reads as the determiner in ``de les ... des``. A piece beyond the
   sentence's readings that is not a word of the sentence expands as the corpus mostly
   expands it (the corpus's most frequent expansion, when the form is a multiword token in
   most of its occurrences); anything else is one word.
5. Words map to reference words by key, k-th occurrence to k-th (as before this module); an
   unmatched word has no word_id.

``srlens_aligned_words`` is an arrow UDF called once per block of sentences: one row holds
the outputs of every run for those sentences, the sentences' token lines and the corpus
vocabulary, so each sentence and each vocabulary is prepared once per block, not per output.
"""

from __future__ import annotations

import gc
import unicodedata
from collections import Counter, defaultdict

import duckdb
import pyarrow as pa

__all__ = ["key", "Sentence", "Vocabulary", "align", "register"]


def key(form: str) -> str:
    """How forms are compared: NFC, casefolded (casefold may decompose, so NFC again)."""
    if form.isascii():  # the common case, and the same result: ASCII is NFC, casefold = lower
        return form.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", form).casefold())


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def is_punctuation(char: str) -> bool:
    """Where a chunk may be cut: punctuation and symbols (`` ` `` and $ are symbols: Sk, Sc)."""
    return unicodedata.category(char)[0] in "PS"


class Sentence:
    """One reference sentence: its text and token lines (ids and forms in file order)."""

    def __init__(self, text, token_ids, token_forms):
        self.words, self.word_keys = [], []  # by word_id - 1
        self.tokens = []  # surface tokens: (form, key, indices of its words)
        inside_until = 0
        for tid, form in zip(token_ids, token_forms):
            if tid.isdigit():  # a word; ids are 1..n in order (the reader checks it)
                k = _spaced_key(form)
                self.words.append(form)
                self.word_keys.append(k)
                if len(self.words) > inside_until:
                    self.tokens.append((form, k, (len(self.words) - 1,)))
            elif "-" in tid:  # a multiword token; empty nodes (8.1) are not words
                first, inside_until = map(int, tid.split("-"))
                self.tokens.append((form, _spaced_key(form), tuple(range(first - 1, inside_until))))
        self.has_multiword = len(self.tokens) < len(self.words)
        self.readings = {}  # key of a surface token -> its readings (word indices), in order
        for _, k, reading in self.tokens:
            self.readings.setdefault(k, []).append(reading)
        self.word_ids = {}  # key -> word ids in order: the k-th occurrence rule
        for i, k in enumerate(self.word_keys, start=1):
            self.word_ids.setdefault(k, []).append(i)
        self.standalone = Counter(k for _, k, reading in self.tokens if len(reading) == 1)
        self.forms = set(self.readings) | set(self.word_ids)
        # Forms with whitespace inside, as their keys' parts: ('1', '000').
        self.spaced = sorted({tuple(f.split(" ")) for f in self.forms if " " in f}, key=len, reverse=True)
        self.chunks = self._reference_chunks(nfc(text or ""))

    def _reference_chunks(self, text):
        """How the sentence's own text splits: key of each whitespace chunk -> per occurrence,
        its pieces as (start, end, reading). Empty when the text does not spell the tokens
        (then outputs are cut like any other text)."""
        chunks = defaultdict(list)
        position, pieces, keys = 0, None, []
        for form, k, reading in self.tokens:
            form = nfc(form)
            start = position
            while start < len(text) and text[start].isspace():
                start += 1
            if not text.startswith(form, start):
                return {}
            if start > position or pieces is None:  # whitespace before it: a new chunk
                if pieces:
                    chunks["".join(keys)].append(pieces)
                pieces, keys, offset = [], [], 0
            pieces.append((offset, offset + len(k), reading))
            keys.append(k)
            offset += len(k)
            position = start + len(form)
        if text[position:].strip():
            return {}
        if pieces:
            chunks["".join(keys)].append(pieces)
        return chunks


def _spaced_key(form):
    """The key of a form, any whitespace inside it written as one space ('1\u00a0000' -> '1 000')."""
    k = key(form)
    return k if k.isascii() and " " not in k else " ".join(k.split())


class Vocabulary:
    """A corpus's forms that can change a segmentation, and how it expands multiword tokens.

    ``entries``: (form, words, n) rows: n surface tokens of that form, expanded into ``words``
    (a multiword token) or not (``words`` None).
    """

    def __init__(self, entries):
        self.forms = set()
        as_mwt, as_word = Counter(), Counter()
        expansions = defaultdict(Counter)
        for form, words, n in entries:
            k = key(form)
            self.forms.add(k)
            if words:
                as_mwt[k] += n
                expansions[k][tuple(words)] += n
            else:
                as_word[k] += n
        # The most frequent expansion (ties: the first in sort order), where the form is a
        # multiword token in most of its occurrences.
        self.expansions = {k: min(c.items(), key=lambda item: (-item[1], item[0]))[0]
                           for k, c in expansions.items() if as_mwt[k] > as_word[k]}


def _join_spaced(chunks, keys, spaced):
    """Join consecutive chunks that spell a spaced form of the sentence at word boundaries."""
    for parts in spaced:
        n = len(parts)
        i = 0
        while i + n <= len(keys):
            head, tail = keys[i], keys[i + n - 1]
            if (head.endswith(parts[0]) and tail.startswith(parts[-1])
                    and keys[i + 1:i + n - 1] == list(parts[1:-1])
                    and (len(head) == len(parts[0]) or is_punctuation(head[-len(parts[0]) - 1]))
                    and (len(tail) == len(parts[-1]) or is_punctuation(tail[len(parts[-1])]))):
                chunks[i:i + n] = [" ".join(chunks[i:i + n])]
                keys[i:i + n] = [" ".join(keys[i:i + n])]
            i += 1
    return chunks, keys


def _segment(folded, sentence_forms, corpus_forms):
    """Cut points of one chunk (its key): see the module docstring, step 3."""
    n = len(folded)
    punct = [is_punctuation(c) for c in folded]
    punct_before = [0]
    for p in punct:
        punct_before.append(punct_before[-1] + p)

    def inside_word(j):  # a cut at j would split a run of letters (or digits, symbols)
        return 0 < j < n and not punct[j - 1] and not punct[j] and folded[j - 1] != " " and folded[j] != " "

    # best[i][p]: (pieces not from the sentence, pieces, end of the first piece) for folded[i:],
    # p = whether that first piece has a punctuation character (None: no such segmentation).
    best = [[None, None] for _ in range(n + 1)]
    best[n] = [(0, 0, n), None]
    for i in range(n - 1, -1, -1):
        if folded[i] == " ":  # only inside joined spaced forms: a free boundary
            rest = min(o for o in best[i + 1] if o)
            best[i] = [(rest[0], rest[1], -(i + 1)), None]
            continue
        for j in range(n, i, -1):  # longest first: a later equal cost does not replace it
            piece = folded[i:j]
            has_punct = punct_before[j] > punct_before[i]
            if piece in sentence_forms:
                other = 0
            elif piece in corpus_forms:
                other = 1
            elif j - i == 1 or (not has_punct and " " not in piece):
                other = 1  # one punctuation character, or a run without punctuation
            else:
                continue
            # A run of letters is cut only where a piece with punctuation starts or ends (n't, l').
            nexts = [best[j][1]] if inside_word(j) and not has_punct else best[j]
            for rest in nexts:
                if rest is None:
                    continue
                cost = (rest[0] + other, rest[1] + 1, j)
                if best[i][has_punct] is None or cost[:2] < best[i][has_punct][:2]:
                    best[i][has_punct] = cost
    cuts, i = [], 0
    while i < n:
        end = min((o for o in best[i] if o), key=lambda o: o[:2])[2]
        if end < 0:  # skipped space
            i = -end
            continue
        cuts.append((i, end))
        i = end
    return cuts


def _pieces(text, sentence, vocabulary):
    """(form, key, reading) of each piece of the output, in order; the reading (indices of the
    words of a surface token) is known for pieces of the reference's own chunks, else None."""
    chunks = nfc(text).split()
    keys = [key(c) for c in chunks]
    if sentence.spaced:
        chunks, keys = _join_spaced(chunks, keys, sentence.spaced)
    pieces, seen = [], Counter()
    for chunk, k in zip(chunks, keys):
        reference = sentence.chunks.get(k)
        if reference:  # a chunk of the reference text: cut as the treebank does, k-th to k-th
            cuts = reference[min(seen[k], len(reference) - 1)]
            seen[k] += 1
        elif k in sentence.forms:
            cuts = [(0, len(k), None)]
        else:
            cuts = [(i, j, None) for i, j in _segment(k, sentence.forms, vocabulary.forms)]
        if len(cuts) == 1:
            pieces.append((chunk, k, cuts[0][2]))
            continue
        same_length = len(k) == len(chunk)  # casefold kept the length: cut the original too
        pieces.extend((chunk[i:j] if same_length else k[i:j], k[i:j], r) for i, j, r in cuts)
    return pieces


def _spelled_out(pieces, sentence):
    """Multiword readings whose words the output already has beyond the sentence's standalone
    ones (pre-tokenized output: 'de les' for 'des'); these are not expanded again."""
    counts = Counter(k for _, k, _ in pieces)
    dropped = set()
    for k in counts:
        multiword = [r for r in sentence.readings.get(k, ()) if len(r) > 1]
        if multiword:
            spelled = min(max(0, counts[w] - sentence.standalone[w])
                          for w in {sentence.word_keys[i] for i in multiword[0]})
            dropped.update(multiword[:spelled])
    return dropped


def align(text, sentence, vocabulary):
    """[(form, word_id or None)] of the syntactic words of one output text."""
    pieces = _pieces(text, sentence, vocabulary)
    if sentence.has_multiword:
        words = _readings(pieces, sentence, vocabulary)
    else:  # the common case: every surface token of the sentence is one word
        words = [(form, k) if k in sentence.word_ids or k not in vocabulary.expansions else None
                 for form, k, _ in pieces]
        if None in words:
            words = _readings(pieces, sentence, vocabulary)
    mapped, seen = [], {}
    for form, k in words:
        ids = sentence.word_ids.get(k, ())
        occurrence = seen.get(k, 0)
        seen[k] = occurrence + 1
        mapped.append((form, ids[occurrence] if occurrence < len(ids) else None))
    return mapped


def _readings(pieces, sentence, vocabulary):
    """(form, key) of the syntactic words of the pieces: module docstring, step 4."""
    dropped = _spelled_out(pieces, sentence) if sentence.has_multiword else set()
    claimed = {r for _, _, r in pieces if r is not None and r not in dropped}
    available = {}  # key -> the sentence's surface tokens of that key not taken yet
    words = []
    for form, k, reading in pieces:
        if reading is None or reading in dropped:
            queue = available.get(k)
            if queue is None:
                queue = available[k] = [r for r in sentence.readings.get(k, ())
                                        if r not in claimed and r not in dropped]
            reading = queue.pop(0) if queue else None  # the next surface token of that key
        if reading is not None:
            if len(reading) == 1:
                words.append((form, k))
            else:  # a multiword token: the sentence's own words
                words.extend((sentence.words[i], sentence.word_keys[i]) for i in reading)
        elif k not in sentence.word_ids and k in vocabulary.expansions:
            words.extend((w, key(w)) for w in vocabulary.expansions[k])
        else:
            words.append((form, k))
    return words


# The arrow UDF: one row per block of sentences of one corpus.
OUTPUT_TYPE = "STRUCT(submission_id VARCHAR, sent_idx INTEGER, output_text VARCHAR)[]"
SENTENCE_TYPE = "STRUCT(sent_idx INTEGER, text VARCHAR, token_ids VARCHAR[], token_forms VARCHAR[])[]"
VOCABULARY_TYPE = "STRUCT(form VARCHAR, words VARCHAR[], n BIGINT)[]"
WORD_FIELDS = [("submission_id", pa.string()), ("sent_idx", pa.int32()), ("word_idx", pa.int32()),
               ("form", pa.string()), ("word_id", pa.int32())]
WORD_TYPE = "STRUCT(submission_id VARCHAR, sent_idx INTEGER, word_idx INTEGER, form VARCHAR, word_id INTEGER)[]"


def _udf_aligned_words(outputs: pa.Array, sentences: pa.Array, vocabularies: pa.Array) -> pa.Array:
    # The objects made here hold no reference cycles. With the collector on, the many small
    # tuples and dicts make it rescan the whole (large) heap of the dbt process again and
    # again: 6 times slower on en_ewt train.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _aligned_words(outputs, sentences, vocabularies)
    finally:
        if collecting:
            gc.enable()


def _aligned_words(outputs, sentences, vocabularies):
    columns = {name: [] for name, _ in WORD_FIELDS}
    offsets = [0]
    for block, block_sentences, entries in zip(outputs.to_pylist(), sentences.to_pylist(),
                                               vocabularies.to_pylist()):
        vocabulary = Vocabulary((e["form"], e["words"], e["n"]) for e in entries or ())
        by_idx = {s["sent_idx"]: Sentence(s["text"], s["token_ids"], s["token_forms"])
                  for s in block_sentences or ()}
        for output in block or ():
            text = output["output_text"]
            if not text:
                continue
            for word_idx, (form, word_id) in enumerate(align(text, by_idx[output["sent_idx"]], vocabulary), 1):
                columns["submission_id"].append(output["submission_id"])
                columns["sent_idx"].append(output["sent_idx"])
                columns["word_idx"].append(word_idx)
                columns["form"].append(form)
                columns["word_id"].append(word_id)
        offsets.append(len(columns["form"]))
    values = pa.StructArray.from_arrays([pa.array(columns[name], type=t) for name, t in WORD_FIELDS],
                                        fields=[pa.field(name, t) for name, t in WORD_FIELDS])
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """``srlens_aligned_words(outputs, sentences, vocabulary)``: the words of every output of a block.

    outputs: the block's output texts; sentences: the token lines of the block's reference
    sentences (ids and forms, in file order); vocabulary: the corpus's entries (see Vocabulary).
    Returns one struct per output word, word_idx 1..n within each output, word_id NULL when
    no reference word matches.
    """
    con.create_function("srlens_aligned_words", _udf_aligned_words,
                        [OUTPUT_TYPE, SENTENCE_TYPE, VOCABULARY_TYPE], WORD_TYPE, type="arrow",
                        null_handling="special")  # a corpus without vocabulary entries passes NULL
