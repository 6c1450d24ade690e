-- Raw tables: everything the inputs contain, as given, so nothing is lost.
-- Written only by the loaders (one transaction per load); read by dbt sources.
-- Typing and derived structure (analysis trees, metrics) belong to dbt models.

create schema if not exists raw;

-- One row per loaded reference treebank (a corpus).
create table if not exists raw.treebank_files (
    corpus      varchar not null,
    language    varchar not null,   -- ISO code (en, fr, ...), 'und' when unknown
    source_file varchar not null,   -- path as given on the command line
    sha256      varchar not null,
    sentences   integer not null,
    words       integer not null,
    loaded_at   timestamp not null
);
-- What the corpus's reference trees are: 'treebank' (gold, raw.tokens) or 'text' (reference texts,
-- `srlens load-references`: no token lines; the trees are their stanza parse, made by each build).
alter table raw.treebank_files add column if not exists reference varchar default 'treebank';

-- One row per sentence of a treebank; sent_idx is the 1-based position in the file.
create table if not exists raw.sentences (
    corpus     varchar not null,
    sent_idx   integer not null,
    sent_id    varchar not null,    -- from '# sent_id = ...', else the sent_idx
    text       varchar,             -- from '# text = ...'
    comments   varchar[] not null,  -- every comment line, verbatim, in order
    first_line integer not null     -- line number of the sentence's first line
);

-- One row per token line: words, multiword-token ranges and empty nodes alike.
-- The ten CoNLL-U columns are kept verbatim as text.
create table if not exists raw.tokens (
    corpus   varchar not null,
    sent_idx integer not null,
    line_no  integer not null,
    id       varchar not null,
    form     varchar not null,
    lemma    varchar not null,
    upos     varchar not null,
    xpos     varchar not null,
    feats    varchar not null,
    head     varchar not null,
    deprel   varchar not null,
    deps     varchar not null,
    misc     varchar not null
);

-- One row per loaded system run.
create table if not exists raw.submissions (
    submission_id varchar not null,  -- campaign/corpus/team/run
    corpus        varchar not null,
    team          varchar not null,
    run           varchar not null,
    campaign      varchar not null,
    source_file   varchar not null,
    format        varchar not null,  -- text | sr | conllu
    matched_by    varchar not null,  -- sent_id | order
    sha256        varchar not null,
    sentences     integer not null,
    missing       integer not null,
    loaded_at     timestamp not null
);

-- One row per reference sentence of the submission's corpus.
create table if not exists raw.outputs (
    submission_id varchar not null,
    sent_idx      integer not null,  -- the reference sentence it realizes
    sent_id       varchar not null,
    text          varchar,           -- as produced; NULL when the run lacks the sentence
    is_missing    boolean not null,
    line_no       integer            -- where the sentence starts in the run's file
);

-- Token lines of runs loaded with --format conllu (already processed by the user's parser).
create table if not exists raw.output_tokens (
    submission_id varchar not null,
    sent_idx      integer not null,
    line_no       integer not null,
    id            varchar not null,
    form          varchar not null,
    lemma         varchar not null,
    upos          varchar not null,
    xpos          varchar not null,
    feats         varchar not null,
    head          varchar not null,
    deprel        varchar not null,
    deps          varchar not null,
    misc          varchar not null
);

-- One row per human judgment (srlens load-human; SPEC section 10). A run, corpus and
-- sentence a judgment names must be loaded. Loading a file replaces every judgment of the
-- (campaign, corpus, team, run, annotator, criterion) sets it contains. A judgment describes
-- one text (text_sha256): reloading the run with another text for the sentence, or without
-- it, deletes the judgment (loaders/human.py).
create table if not exists raw.human_judgments (
    campaign    varchar not null,   -- 'default' when the file has no campaign column
    corpus      varchar not null,
    team        varchar not null,
    run         varchar not null,
    annotator   varchar not null,
    sent_id     varchar not null,
    criterion   varchar not null,   -- as given; compared lower-cased (fluency, adequacy, ...)
    score       double not null,    -- raw score; z-normalized per annotator in dbt
    source_file varchar not null,
    line_no     integer not null,   -- line of the judgment in source_file
    loaded_at   timestamp not null,
    text_sha256 varchar             -- sha256 of the output text judged (UTF-8, hex)
);
-- Warehouses written before text_sha256 existed: add it, and take the run's current text as
-- the judged one (what the build attached them to until then). Judgments of a sentence the
-- run lacks keep NULL and are never attached.
alter table raw.human_judgments add column if not exists text_sha256 varchar;
update raw.human_judgments h set text_sha256 = sha256(o.text)
from raw.submissions s, raw.outputs o
where h.text_sha256 is null
  and s.campaign = h.campaign and s.corpus = h.corpus and s.team = h.team and s.run = h.run
  and o.submission_id = s.submission_id and o.sent_id = h.sent_id and not o.is_missing;

-- Morphosyntactic rules added, changed or disabled by hand (`srlens load-rules FILE`, SPEC
-- section 9). One row per CSV row, validated and completed by loaders/rules.py: rule_id and the
-- defining columns always agree. Loading a file again replaces its rows (source_file is the
-- resolved path). A row whose rule_id is an extracted rule overrides it; others are manual rules.
create table if not exists raw.lambre_manual_rules (
    source_file    varchar not null,
    line_no        integer not null,   -- CSV line of the row (header = line 1)
    rule_id        varchar not null,
    language       varchar not null,
    kind           varchar not null,   -- agreement | argstruct
    deprel         varchar not null,
    dep_upos       varchar not null,
    head_upos      varchar not null,
    feature        varchar not null,
    side           varchar not null,   -- both (agreement) | dep | head (argstruct)
    allowed_values varchar[],          -- argstruct only; NULL: keep the extracted values
    enabled        boolean not null,
    comment        varchar,
    sha256         varchar not null,
    loaded_at      timestamp not null
);

-- Corpora without a reference treebank (`srlens load-outputs --no-reference`): created
-- by the first run loaded into them, with its language. Their sentences are those of the corpus's
-- runs (raw.outputs); reference-based scores of their runs are NULL.
create table if not exists raw.reference_free_corpora (
    corpus     varchar not null,
    language   varchar not null,
    created_at timestamp not null
);

-- System-level human scores (`srlens load-human FILE --level system`), as WMT publishes them: one
-- score per run and criterion. Loading a file replaces the (campaign, corpus, team, run,
-- criterion) rows it contains. orientation says how to read the score: 'higher' (higher is
-- better, e.g. DA z-scores) or 'lower' (an error penalty such as MQM).
create table if not exists raw.system_human_scores (
    campaign    varchar not null,
    corpus      varchar not null,
    team        varchar not null,
    run         varchar not null,
    criterion   varchar not null,   -- lower-cased
    score       double not null,
    orientation varchar not null,   -- higher | lower
    source_file varchar not null,
    line_no     integer not null,
    loaded_at   timestamp not null
);

-- Campaign dates (`srlens campaign NAME --date YYYY[-MM-DD]`): one row per campaign. date_text is
-- as given; campaign_date is its first day (2019 -> 2019-01-01), for ordering and plotting.
create table if not exists raw.campaign_dates (
    campaign      varchar not null,
    date_text     varchar not null,
    campaign_date date not null,
    set_at        timestamp not null
);
