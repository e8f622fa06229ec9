#!/usr/bin/env python3
"""Writes the charset names some reader of a body resolves (KnownCharsets, attacker pass 11, P13-5).

Usage: scripts/charset-names.py LABELS_JSON LIBICONV_LIB > modules/middleware-spi/src/main/resources/dev/openshell/middleware/spi/internal/charset-names.txt
LABELS_JSON is whatwg-encoding's lib/labels-to-names.json (npm pack whatwg-encoding). LIBICONV_LIB is the lib/
directory of a GNU libiconv source tree (1.17 or later): its encodings*.def files name every encoding and alias
libiconv resolves, with or without --enable-extra-encodings (lxml's wheels from PyPI link libiconv, whose JAVA and
C99 decode backslash-u escapes; attacker pass 15, P17-1). Reads this Python's codecs, glibc's `iconv -l` and
ICU's `uconv -l` (icu-devtools: every converter and alias; libxml2 falls back to ICU for a name iconv cannot open, as
Debian builds it: SCSU, attacker pass 15b, P17b-2). Each name
is written as a codec lookup reads it (CharsetName), and again with '.' as '_'.
"""
import glob
import os
import encodings
import encodings.aliases
import json
import pkgutil
import re
import subprocess
import sys


def norm(s):
    return '-'.join(p for p in re.split(r'[^A-Za-z0-9.]+', s) if p).lower()


python = (set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values())
          | {m.name for m in pkgutil.iter_modules(encodings.__path__)} | {'x-sjis', 'macintosh'})
# UTF-7's names in .NET's Encoding.GetEncoding and ICU's alias table, which none of the sources below lists
others = {'csUnicode11UTF7', 'unicode-1-1-utf-7', 'unicode-2-0-utf-7', 'x-unicode-1-1-utf-7', 'x-unicode-2-0-utf-7',
          'windows-65000', 'utf-7-imap', 'x-imap4-modified-utf7', 'imap-mailbox-name'}
iconv = [x.strip().rstrip('/') for x in subprocess.run(['iconv', '-l'], capture_output=True, text=True, check=True)
         .stdout.replace(',', '\n').split('\n') if x.strip()]
icu = subprocess.run(['uconv', '-l'], capture_output=True, text=True, check=True).stdout.split()
if 'SCSU' not in icu:
    sys.exit('uconv -l listed no SCSU: is ICU (icu-devtools) installed?')
whatwg = json.load(open(sys.argv[1]))
libiconv = set()
for path in sorted(glob.glob(os.path.join(sys.argv[2], 'encodings*.def'))):
    text = re.sub(r'/\*.*?\*/', ' ', open(path, encoding='latin-1').read(), flags=re.S)  # comments out
    libiconv |= set(re.findall(r'"([^"]+)"', text))
if 'JAVA' not in libiconv:
    sys.exit('no libiconv encodings*.def read from ' + sys.argv[2])
names = {norm(v) for src in (python, iconv, whatwg, others, libiconv, icu) for n in src for v in (n, n.replace('.', '_'))}
names -= {''}
print("# Charset names some reader of a body resolves, as a codec lookup reads a name (CharsetName: lower case, every")
print("# run of bytes other than letters, digits and '.' one '-', none at the ends; each name also with '.' read as '-').")
print("# Sources: Python %s's codecs (encodings.aliases and the encodings package's modules: BeautifulSoup and"
      % sys.version.split()[0])
print("# charset_normalizer look names up there; BeautifulSoup's own x-sjis), glibc's iconv -l (libxml2, so lxml, hands")
print("# a name to iconv), and the WHATWG Encoding Standard's labels (whatwg-encoding's labels-to-names.json: browsers,")
print("# html5lib), GNU libiconv's encodings and aliases (its lib/encodings*.def: lxml's wheels link libiconv), ICU")
print("# %s's converters and aliases (uconv -l: libxml2's fallback on Debian), and UTF-7's names in .NET and ICU. The JDK's"
      % subprocess.run(['uconv', '--version'], capture_output=True, text=True).stdout.split()[-1])
print("# names and aliases are added at run time. Regenerate with scripts/charset-names.py. %d names." % len(names))
print('\n'.join(sorted(names)))
