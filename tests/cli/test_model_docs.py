"""Every dbt model is documented beside its SQL: a non-empty description in a yml of its own folder."""

import yaml

from srlens.paths import DBT_PROJECT_DIR

MODELS_DIR = DBT_PROJECT_DIR / "models"


def described_models(folder):
    """{model name: description} of the `models:` entries of the yml files directly in folder."""
    found = {}
    for path in sorted(folder.glob("*.yml")):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            found[model["name"]] = (model.get("description") or "").strip()
    return found


def test_every_model_has_a_description_in_a_yml_beside_it():
    sql_files = sorted(MODELS_DIR.rglob("*.sql"))
    assert len(sql_files) > 80  # the glob sees the models (staging, intermediate folders, marts)
    undocumented = [
        str(path.relative_to(MODELS_DIR)) for path in sql_files if not described_models(path.parent).get(path.stem)
    ]
    assert undocumented == []


def test_no_yml_documents_a_model_that_is_not_beside_it():
    """A yml entry for a model of another folder would pass the test above there while the model
    moved away; each entry names a .sql of its own folder."""
    stray = [
        f"{path.relative_to(MODELS_DIR)}: {model['name']}"
        for path in sorted(MODELS_DIR.rglob("*.yml"))
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", [])
        if not (path.parent / f"{model['name']}.sql").exists()
    ]
    assert stray == []
