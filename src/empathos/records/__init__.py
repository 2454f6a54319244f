"""Dialogue records: the versioned model, the published-format importer, file I/O."""

from empathos.records.build import crash_record, record_from_ratings
from empathos.records.io import (
    LoadedRecord,
    RecordFormat,
    detect_format,
    find_record_files,
    load_records,
    read_record,
    record_from_data,
    write_record,
)
from empathos.records.model import (
    SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    DialogueError,
    DialogueRecord,
    DirectorAction,
    Evaluation,
    IndicatorRating,
    InitialDeficit,
    ModelCallRecord,
    Rejudged,
    Turn,
)
from empathos.records.published import (
    import_published,
    is_published,
    termination_kind_from_text,
)

__all__ = [
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "DialogueError",
    "DialogueRecord",
    "DirectorAction",
    "Evaluation",
    "IndicatorRating",
    "InitialDeficit",
    "LoadedRecord",
    "ModelCallRecord",
    "RecordFormat",
    "Rejudged",
    "Turn",
    "crash_record",
    "detect_format",
    "find_record_files",
    "import_published",
    "is_published",
    "load_records",
    "read_record",
    "record_from_data",
    "record_from_ratings",
    "termination_kind_from_text",
    "write_record",
]
