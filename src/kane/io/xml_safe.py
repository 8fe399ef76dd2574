"""XML model files (URDF, and the MJCF loader to come) read safely: bytes decoded as their XML declaration says or
refused, then parsed by the standard library's expat parser with every entity declaration refused.

Decoding follows the XML specification's rules: a byte order mark (UTF-8, UTF-16, UTF-32) decides; without one,
the first bytes tell 16- or 32-bit text from an 8-bit one, and an 8-bit file is read in the encoding its
declaration names (``<?xml version="1.0" encoding="ISO-8859-1"?>``), UTF-8 when it names none. Only the text
encodings of :data:`ENCODINGS` are accepted (not Python's codecs that transform bytes, such as base64 or
unicode_escape); bytes that are not text in that encoding are refused with a :class:`kane.ModelError` naming the
file, the encoding, where it came from and the offset of the first bad byte.

Entities: a document type that declares any entity (``<!ENTITY ...>``, internal or external) is refused before
anything is expanded: a model needs none, and "billion laughs" expansions or ``SYSTEM "file:///..."`` reads stay
out.
"""

from __future__ import annotations

import codecs
import os
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

from ..errors import ModelError

__all__ = ["ENCODINGS", "decode_xml", "parse_xml", "read_xml_text"]

ENCODINGS = frozenset({"utf-8", "ascii", "cp1252", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                       "utf-32-be", *(f"iso8859-{k}" for k in (*range(1, 12), *range(13, 17)))})
# (byte order mark, codec) longest first: UTF-32-LE's mark begins with UTF-16-LE's
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# without a mark, '<' in the first code unit tells the width and the byte order (XML 1.0, appendix F)
_WIDE = ((b"<\x00\x00\x00", "utf-32-le"), (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00?\x00", "utf-16-le"),
         (b"\x00<\x00?", "utf-16-be"))
_DECLARATION = re.compile(r"""<\?xml[^>]*?\bencoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]{0,39})\1""")


def _codec(name: str, where: str) -> str:
    """The canonical name of a declared encoding, refused unless it is one of :data:`ENCODINGS`."""
    try:
        canonical = codecs.lookup(name).name
    except LookupError:
        canonical = None
    if canonical not in ENCODINGS:
        raise ModelError(f"{where}: the XML declaration names the encoding {name!r}, which kane does not read; "
                         "expected UTF-8 (best), UTF-16, UTF-32, ASCII, ISO-8859-x or cp1252")
    return canonical


def decode_xml(data: bytes, where: str) -> str:
    """The text of the XML document ``data`` (bytes), decoded as its byte order mark or declaration says (UTF-8
    when neither does); ``where`` names the file in errors."""
    mark = next(((bom, codec) for bom, codec in _BOMS if data.startswith(bom)), None)
    if mark is not None:
        body, codec, origin = data[len(mark[0]):], mark[1], "its byte order mark"
    else:
        codec = next((c for prefix, c in _WIDE if data.startswith(prefix)), None)
        body, origin = data, "its first bytes"
        if codec is None:
            head = data[:200].decode("latin-1")
            found = _DECLARATION.match(head)
            codec, origin = (_codec(found.group(2), where), "its XML declaration") if found else (
                "utf-8", "no encoding declared: UTF-8")
            if codec.startswith(("utf-16", "utf-32")):
                raise ModelError(f"{where}: the XML declaration says {found.group(2)!r} but the file is 8-bit "
                                 "text (no byte order mark, no 16-bit '<'); expected its bytes in the declared "
                                 "encoding, or the declaration fixed")
    try:
        return body.decode(codec)
    except UnicodeDecodeError as exc:
        bad = body[exc.start:exc.start + 4].hex(" ")
        raise ModelError(f"{where}: the bytes at offset {exc.start + len(data) - len(body)} ({bad}) are not "
                         f"{codec} text ({origin}); expected the file saved in that encoding, or its XML "
                         "declaration naming the one it is saved in") from None


def _refuse_entity(name, *_):
    raise ModelError(f"declares the entity {name!r}; a model file needs no entities and kane expands none "
                     "(remove the <!DOCTYPE ...> declarations)")


def parse_xml(text: str, where: str) -> ET.Element:
    """The root element of the XML document ``text`` (a str, already decoded); a document that declares entities
    or that is not well-formed raises :class:`kane.ModelError` naming ``where``."""
    scan = expat.ParserCreate()  # a first pass that stops at the first entity declaration, before any expansion
    scan.EntityDeclHandler = _refuse_entity
    try:  # fed a str, expat reads it as the decoded text it is, whatever encoding the declaration names
        scan.Parse(text, True)
        return ET.fromstring(text)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
    except expat.ExpatError as exc:
        raise ModelError(f"{where}: not well-formed XML ({expat.ErrorString(exc.code)}: line {exc.lineno}, "
                         f"column {exc.offset})") from None
    except ET.ParseError as exc:
        raise ModelError(f"{where}: not well-formed XML ({exc})") from None
    except (RecursionError, MemoryError) as exc:
        raise ModelError(f"{where}: the XML is nested too deeply or too large to read ({type(exc).__name__})") \
            from None


def read_xml_text(path, max_bytes: int | None = None, kind: str = "XML") -> str:
    """The text of the XML file ``path`` decoded by :func:`decode_xml` (parse it with :func:`parse_xml`); a file
    larger than ``max_bytes`` (when given) is refused before it is read; ``kind`` ("URDF") names it in errors."""
    where = str(path)
    try:
        size = os.stat(path).st_size
        if max_bytes is not None and size > max_bytes:
            raise ModelError(f"{where}: the {kind} file has {size} bytes, more than the limit of {max_bytes}")
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ModelError(f"{where}: cannot read the {kind} file ({exc.strerror or exc})") from None
    return decode_xml(data, where)
