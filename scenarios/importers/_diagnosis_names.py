"""The other names an imported diagnosis goes by, as ``synonyms`` of ``expected.diagnoses``.

Its standard abbreviation or expansion and its forms without qualifiers: the scorer credits a diagnosis named by any
of them.

``diagnosis_entry(name)`` makes the entry of one diagnosis name:

- a parenthesised part is another name, and the rest is one too ("Myocardial infarction (STEMI)" -> "Myocardial
  infarction", "STEMI"), unless the part only says where, how much or how sure ("(right lower lobe)", "(stage 2)");
- an abbreviation of ``ABBREVIATIONS`` (a small vocabulary of standard clinical abbreviations of diagnoses) in a name
  gives the name with it spelt out ("Acute exacerbation of COPD" -> "Acute exacerbation of chronic obstructive
  pulmonary disease"), and a spelt-out form in a name gives the name with its abbreviation ("Post-traumatic stress
  disorder" -> "PTSD"). Only standard abbreviations are used, never a made-up acronym of the name's initials, and an
  abbreviation that stands for two common diagnoses (AS, BPD, ASD, MM, GBS) is not in the vocabulary;
- qualifier-free forms: the name without a leading qualifier of acuity, severity, side, course or setting ("Acute
  appendicitis" -> "Appendicitis", "Community-acquired pneumonia" -> "Pneumonia"; ``_QUALIFIERS``), without what
  follows a comma or "without"/"with no" ("Malignant neoplasm of kidney, except pelvis" -> "Malignant neoplasm of
  kidney"). A qualifier that is part of a standard name is kept ("Acute kidney injury", "Chronic obstructive pulmonary
  disease" are names of their own), and a form left as one generic word ("pain", "infection") is not added.

Spelling is compared without case, hyphens, apostrophes and accents ("Guillain-Barré" = "guillain barre").
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from scenarios.importers._osce_sections import _split_name

# Standard abbreviations of diagnoses -> what they stand for (the first is the usual name).
ABBREVIATIONS: dict[str, list[str]] = {
    "AAA": ["abdominal aortic aneurysm"], "ACS": ["acute coronary syndrome"],
    "ADEM": ["acute disseminated encephalomyelitis"], "ADHD": ["attention deficit hyperactivity disorder",
                                                                "attention-deficit/hyperactivity disorder"],
    "ADPKD": ["autosomal dominant polycystic kidney disease"], "AF": ["atrial fibrillation"],
    "AFib": ["atrial fibrillation"], "AIDS": ["acquired immunodeficiency syndrome"],
    "AIN": ["acute interstitial nephritis"], "AKI": ["acute kidney injury"],
    "ALL": ["acute lymphoblastic leukemia", "acute lymphoblastic leukaemia"], "ALS": ["amyotrophic lateral sclerosis"],
    "AML": ["acute myeloid leukemia", "acute myeloid leukaemia", "acute myelogenous leukemia"],
    "AOM": ["acute otitis media"], "ARDS": ["acute respiratory distress syndrome"],
    "ARPKD": ["autosomal recessive polycystic kidney disease"], "ATN": ["acute tubular necrosis"],
    "AVNRT": ["atrioventricular nodal reentrant tachycardia"], "BCC": ["basal cell carcinoma"],
    "BPH": ["benign prostatic hyperplasia", "benign prostatic hypertrophy"],
    "BPPV": ["benign paroxysmal positional vertigo"], "CAD": ["coronary artery disease"],
    "CAP": ["community-acquired pneumonia"], "CHF": ["congestive heart failure"],
    "CIDP": ["chronic inflammatory demyelinating polyneuropathy"], "CJD": ["Creutzfeldt-Jakob disease"],
    "CKD": ["chronic kidney disease"], "CLL": ["chronic lymphocytic leukemia", "chronic lymphocytic leukaemia"],
    "CML": ["chronic myeloid leukemia", "chronic myeloid leukaemia", "chronic myelogenous leukemia"],
    "COPD": ["chronic obstructive pulmonary disease"], "CRPS": ["complex regional pain syndrome"],
    "CVA": ["cerebrovascular accident"], "DCIS": ["ductal carcinoma in situ"], "DCM": ["dilated cardiomyopathy"],
    "DDH": ["developmental dysplasia of the hip"], "DIC": ["disseminated intravascular coagulation"],
    "DKA": ["diabetic ketoacidosis"], "DLBCL": ["diffuse large B-cell lymphoma"], "DVT": ["deep vein thrombosis",
                                                                                          "deep venous thrombosis"],
    "GAD": ["generalized anxiety disorder", "generalised anxiety disorder"], "GCA": ["giant cell arteritis"],
    "GDM": ["gestational diabetes mellitus"], "GERD": ["gastroesophageal reflux disease"],
    "GORD": ["gastro-oesophageal reflux disease"], "HCC": ["hepatocellular carcinoma"],
    "HCM": ["hypertrophic cardiomyopathy"], "HELLP": ["hemolysis, elevated liver enzymes and low platelets"],
    "HFMD": ["hand, foot and mouth disease", "hand foot and mouth disease"],
    "HHS": ["hyperosmolar hyperglycemic state"],
    "HIV": ["human immunodeficiency virus infection"], "HOCM": ["hypertrophic obstructive cardiomyopathy"],
    "HSP": ["Henoch-Schonlein purpura"], "HUS": ["hemolytic uremic syndrome", "haemolytic uraemic syndrome"],
    "IBD": ["inflammatory bowel disease"], "IBS": ["irritable bowel syndrome"],
    "ICH": ["intracerebral hemorrhage", "intracerebral haemorrhage"], "IDA": ["iron deficiency anemia",
                                                                            "iron deficiency anaemia"],
    "IIH": ["idiopathic intracranial hypertension"], "ILD": ["interstitial lung disease"],
    "IPF": ["idiopathic pulmonary fibrosis"], "ITP": ["immune thrombocytopenic purpura", "immune thrombocytopenia",
                                                      "idiopathic thrombocytopenic purpura"],
    "IUGR": ["intrauterine growth restriction"], "JIA": ["juvenile idiopathic arthritis"],
    "LEMS": ["Lambert-Eaton myasthenic syndrome", "Lambert-Eaton syndrome"], "MDD": ["major depressive disorder"],
    "MGUS": ["monoclonal gammopathy of undetermined significance"], "MI": ["myocardial infarction"],
    "NAFLD": ["non-alcoholic fatty liver disease", "nonalcoholic fatty liver disease"],
    "NASH": ["non-alcoholic steatohepatitis", "nonalcoholic steatohepatitis"], "NEC": ["necrotizing enterocolitis",
                                                                                      "necrotising enterocolitis"],
    "NHL": ["non-Hodgkin lymphoma"], "NMS": ["neuroleptic malignant syndrome"],
    "NPH": ["normal pressure hydrocephalus"], "NSTEMI": ["non-ST-elevation myocardial infarction"],
    "OCD": ["obsessive-compulsive disorder"], "ODD": ["oppositional defiant disorder"],
    "OSA": ["obstructive sleep apnea", "obstructive sleep apnoea"], "PAD": ["peripheral arterial disease",
                                                                          "peripheral artery disease"],
    "PBC": ["primary biliary cholangitis", "primary biliary cirrhosis"], "PCOS": ["polycystic ovary syndrome",
                                                                                 "polycystic ovarian syndrome"],
    "PDA": ["patent ductus arteriosus"], "PE": ["pulmonary embolism"], "PID": ["pelvic inflammatory disease"],
    "PML": ["progressive multifocal leukoencephalopathy"], "PMR": ["polymyalgia rheumatica"],
    "PPH": ["postpartum hemorrhage", "postpartum haemorrhage"], "PSC": ["primary sclerosing cholangitis"],
    "PTSD": ["post-traumatic stress disorder", "posttraumatic stress disorder"], "RA": ["rheumatoid arthritis"],
    "RCC": ["renal cell carcinoma"], "RDS": ["respiratory distress syndrome"],
    "RLS": ["restless legs syndrome"], "SAH": ["subarachnoid hemorrhage", "subarachnoid haemorrhage"],
    "SCC": ["squamous cell carcinoma"], "SCFE": ["slipped capital femoral epiphysis"],
    "SDH": ["subdural hematoma", "subdural haematoma"], "SIADH": ["syndrome of inappropriate antidiuretic hormone"
                                                                  " secretion"],
    "SIDS": ["sudden infant death syndrome"], "SJS": ["Stevens-Johnson syndrome"],
    "SLE": ["systemic lupus erythematosus"], "STEMI": ["ST-elevation myocardial infarction"],
    "SVT": ["supraventricular tachycardia"], "TB": ["tuberculosis"], "TEN": ["toxic epidermal necrolysis"],
    "TIA": ["transient ischemic attack", "transient ischaemic attack"], "TOF": ["tetralogy of Fallot"],
    "TTP": ["thrombotic thrombocytopenic purpura"], "UC": ["ulcerative colitis"],
    "UTI": ["urinary tract infection"], "VSD": ["ventricular septal defect"], "VT": ["ventricular tachycardia"],
    "VTE": ["venous thromboembolism"],
}

# Leading qualifiers of acuity, severity, side, course and setting: the name without them names the same condition.
_QUALIFIERS = re.compile(r"^(?:(?:acute|subacute|chronic|hyperacute|mild|moderate|severe|moderately severe|"
                         r"bilateral|unilateral|left|right|left-sided|right-sided|recurrent|early|late|"
                         r"community-acquired|community acquired|hospital-acquired|hospital acquired|nosocomial|"
                         r"uncomplicated|simple|isolated|new-onset|new onset|first-episode|first episode)[\s,]+)+",
                         re.I)
# What follows names a detail of the condition, not another one: a comma, "without", "with no".
_TRAILING = re.compile(r"\s*(?:,\s+|\s+(?:without|with no|w/o)\s+).*$", re.I)
# One word that names no specific condition (a symptom, a sign, a category) is not a synonym on its own.
_GENERIC = {"pain", "fever", "infection", "injury", "bleeding", "hemorrhage", "haemorrhage", "disease", "disorder",
            "syndrome", "failure", "inflammation", "mass", "lesion", "tumor", "tumour", "cancer", "anemia", "anaemia",
            "hypertension", "hypotension", "shock", "fracture", "ulcer", "cyst", "abscess", "obstruction", "rash",
            "headache", "cough", "dyspnea", "seizure", "syncope", "weakness", "fatigue", "depression", "anxiety"}


def _key(text: str) -> str:
    """Lower case, no accents, hyphens, slashes or apostrophes, single spaces."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(re.sub(r"['’]", "", re.sub(r"[-/]", " ", plain.lower())).split())


_BY_EXPANSION = sorted(((_key(e), abbr) for abbr, exps in ABBREVIATIONS.items() for e in exps),
                       key=lambda x: -len(x[0]))
_BY_ABBREVIATION = {a.lower(): exps for a, exps in ABBREVIATIONS.items()}


def _spelt(expansion: str) -> re.Pattern[str]:
    """``expansion`` as written in a name: any case, hyphens or spaces between its words, apostrophes optional."""
    parts = [re.escape(w) for w in _key(expansion).split()]
    return re.compile(r"\b" + r"['’]?[\s\-/]+".join(parts) + r"\b", re.I)


def _abbreviated(name: str) -> list[str]:
    """The name with each spelt-out standard name in it abbreviated ("Post-traumatic stress disorder" -> "PTSD")."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    out = []
    for expansion, abbr in _BY_EXPANSION:
        if f" {expansion} " in f" {_key(name)} ":
            out.append(" ".join(_spelt(expansion).sub(abbr, plain, count=1).split()))
    return out


def _expanded(name: str) -> list[str]:
    """The name with each standard abbreviation in it spelt out ("Exacerbation of COPD" -> "... of chronic ...")."""
    out = []
    for token in re.findall(r"[A-Za-z][A-Za-z0-9]*", name):
        if token.lower() in _BY_ABBREVIATION and (token.isupper() or token in ABBREVIATIONS):
            for expansion in _BY_ABBREVIATION[token.lower()]:
                out.append(re.sub(rf"\b{re.escape(token)}\b", expansion, name, count=1))
    return out


def _unqualified(name: str) -> list[str]:
    """The name without its leading qualifiers or its trailing detail, where that leaves a specific name."""
    out = []
    bare = _TRAILING.sub("", name).strip()
    if bare and bare != name:
        out.append(bare)
    for form in [name, bare]:
        stripped = _QUALIFIERS.sub("", form).strip()
        if not stripped or stripped == form:
            continue
        removed = _key(form[: len(form) - len(stripped)])
        if re.search(r"\b(?:acute|subacute|chronic|hyperacute|early|late|simple|isolated)\b", removed) and any(
                f" {expansion} " in f" {_key(form)} " and f" {expansion} " not in f" {_key(stripped)} "
                for expansion, _ in _BY_EXPANSION):
            continue  # "Acute kidney injury": the qualifier is part of a standard name
        out.append(stripped[0].upper() + stripped[1:])
    return [f for f in out if not (len(_key(f).split()) == 1 and _key(f) in _GENERIC)]


# Words of a parenthesised part that says where or how much, not what ("(right lower lobe)", "(stage 2)").
_DETAIL_WORDS = {"left", "right", "upper", "middle", "lower", "lobe", "lobes", "bilateral", "unilateral", "anterior",
                 "posterior", "medial", "lateral", "proximal", "distal", "superior", "inferior", "side", "sided",
                 "sides", "quadrant", "stage", "grade", "type", "class", "mild", "moderate", "severe", "likely",
                 "suspected", "probable", "confirmed", "early", "late", "acute", "chronic", "and", "of", "the", "with",
                 "in", "on"}


def _is_detail(part: str) -> bool:
    """A parenthesised part that only says where, how much or how sure ("right lower lobe", "stage 2")."""
    w = [x for x in re.findall(r"[a-z]+", _key(part)) if not x.isdigit()]
    return not w or all(x in _DETAIL_WORDS or len(x) == 1 or re.fullmatch(r"[ivx]+", x) for x in w)


def diagnosis_synonyms(name: str) -> list[str]:
    """Every other name of the diagnosis ``name`` (see the module docstring), without the name itself."""
    base, alt = _split_name(name)
    forms = [base, *(a for a in alt if not _is_detail(a))]
    for form in list(forms):
        forms.extend(_unqualified(form))
    for form in list(forms):
        forms.extend(_abbreviated(form))
        forms.extend(_expanded(form))
    for form in list(forms):
        forms.extend(_unqualified(form))
    seen, out = {_key(name)}, []
    for form in forms:
        if (k := _key(form)) and k not in seen:
            seen.add(k)
            out.append(form)
    return out


def diagnosis_entry(name: str) -> dict[str, Any]:
    """``expected.diagnoses`` entry of one diagnosis name: the name and its synonyms."""
    synonyms = diagnosis_synonyms(name)
    return {"name": name, "synonyms": synonyms} if synonyms else {"name": name}
