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
