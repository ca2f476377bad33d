"""The final-assessment reader against replies formatted the way chat models format them.

FINAL replies end the encounter and must parse to the expected triage level, escalation and first
diagnosis; MID replies are questions or statements from the middle of an interview that mention an
assessment (or use markdown) and must not end it.
"""

from __future__ import annotations

import pytest

from sim.encounter.assessment import assessment_form, is_assessment, parse_assessment

Case = tuple[str, int, str, str]  # reply, triage level, escalation, substring of the first diagnosis (lowercase)

# ------------------------------------------------------------------------------------------ 1. plain block
PLAIN: dict[str, Case] = {
    "plain-acs": ("""Thank you for answering all my questions, that gives me a clear picture.

ASSESSMENT:
Triage level: ESI 2
Escalation: emergency
Diagnoses: 1. Acute coronary syndrome; 2. Aortic dissection; 3. Pulmonary embolism
Advice: Call 911 now. Chew 325 mg of aspirin if you are not allergic, unlock the door and sit down while you wait.""",
                  2, "emergency", "acute coronary syndrome"),
    "plain-cystitis": ("""Okay, that all fits together.

ASSESSMENT:
Triage level: ESI 5
Escalation: routine
Diagnoses: 1. Acute uncomplicated cystitis; 2. Urethritis; 3. Vaginitis
Advice: Book an appointment with your GP or a pharmacist-led clinic in the next day or two for a urine test and \
antibiotics. Drink plenty of water. If you develop fever, back or flank pain, or vomiting, get seen the same day.""",
                       5, "routine", "cystitis"),
    "plain-cold-lowercase-label": ("""Assessment:
Triage level: ESI 5
Escalation: self_care
Diagnoses: 1. Common cold (viral upper respiratory infection); 2. Allergic rhinitis; 3. Early sinusitis
Advice: Rest, fluids, paracetamol or ibuprofen for aches, saline nasal spray. It should settle within 7-10 days. \
See your GP if you are not improving after 10 days or if you get a high fever.""",
                                   5, "self_care", "common cold"),
    "plain-anaphylaxis-code-fence": ("""Thanks — I have enough information now.

```
ASSESSMENT:
Triage level: ESI 1
Escalation: emergency
Diagnoses: 1. Anaphylaxis (peanut); 2. Angioedema; 3. Acute asthma attack
Advice: Use the adrenaline auto-injector in her outer thigh right now and call 999. Lie her down with legs \
raised unless she is struggling to breathe.
```""", 1, "emergency", "anaphylaxis"),
    "plain-cellulitis-my-assessment": ("""My assessment:
Triage level: ESI 4
Escalation: urgent
Diagnoses: 1. Cellulitis of the lower leg; 2. Insect bite reaction; 3. Deep vein thrombosis
Advice: Please get seen today at urgent care or by your GP so the redness can be examined and antibiotics \
started. Mark the edge of the redness with a pen. Go to the emergency department if you develop fever, chills or \
the redness spreads quickly.""", 4, "urgent", "cellulitis"),
    "plain-stroke": ("""I'm worried about what you're describing with your father.

ASSESSMENT:
Triage level: ESI 1
Escalation: emergency
Diagnoses: 1. Acute ischaemic stroke; 2. Intracerebral haemorrhage; 3. Transient ischaemic attack
Advice: Call 911 immediately — note the time the symptoms started (about 20 minutes ago). Do not give him \
anything to eat or drink, including aspirin.""", 1, "emergency", "ischaemic stroke"),
    "plain-sprain": ("""ASSESSMENT:
Triage level: ESI 5
Escalation: self_care
Diagnoses: 1. Lateral ankle sprain (grade 1-2); 2. Ankle fracture (less likely, you can weight-bear); 3. \
Achilles tendon strain
Advice: RICE — rest, ice 20 minutes every 2-3 hours, compression bandage, elevation. Ibuprofen for pain. If you \
cannot walk four steps, or the bony parts of the ankle become very tender, get an X-ray at urgent care.""",
                     5, "self_care", "ankle sprain"),
    "plain-migraine": ("""Thanks for bearing with all the questions.

ASSESSMENT:
Triage level: ESI 4
Escalation: routine
Diagnoses: 1. Migraine with aura; 2. Tension-type headache; 3. Medication overuse headache
Advice: Take your usual triptan early in an attack, rest in a dark room, and book an appointment with your GP in \
the next week or two to talk about preventive treatment. Call 999 if you get a sudden "worst ever" headache, \
weakness, or trouble speaking.""", 4, "routine", "migraine"),
}

# ------------------------------------------------------------------------------------------ 2. bold labels
BOLD_LABELS: dict[str, Case] = {
    "bold-acs": ("""Thank you, that's really helpful — and I'm glad you reached out.

**ASSESSMENT:**
**Triage level:** ESI 2
**Escalation:** Emergency
**Diagnoses:** 1. Acute coronary syndrome (possible heart attack); 2. Unstable angina; 3. Aortic dissection
**Advice:** Please call 911 right now. Don't drive yourself. If you're not allergic, chew one regular aspirin \
(325 mg) while you wait.""", 2, "emergency", "acute coronary syndrome"),
    "bold-colon-outside-pyelo": ("""**Assessment**:
**Triage level**: ESI 3
**Escalation**: Urgent
**Diagnoses**: 1. Acute pyelonephritis; 2. Kidney stone with infection; 3. Acute cystitis
**Advice**: You need to be seen today — go to an urgent care centre or your GP's same-day clinic for a urine \
test, bloods and antibiotics. If you start vomiting and can't keep fluids down, or feel faint, go to the \
emergency department.""", 3, "urgent", "pyelonephritis"),
    "bold-appendicitis-blank-line": ("""I appreciate you walking me through this. The pattern you're describing — pain \
that started around the belly button and moved to the lower right, worse when you walk, with a low fever and no \
appetite — is something we need to take seriously.

**Assessment:**

**Triage level:** ESI 3
**Escalation:** Emergency
**Diagnoses:** 1. Acute appendicitis; 2. Mesenteric adenitis; 3. Gastroenteritis
**Advice:** Please go to the emergency department now for an exam, blood tests and possibly a scan. Don't eat or \
drink anything in case you need surgery, and don't take painkillers that might mask the pain until you've been \
seen.""", 3, "emergency", "appendicitis"),
    "bold-my-assessment-asthma": ("""**My assessment:**
**Triage level:** ESI 2
**Escalation:** emergency
**Diagnoses:** 1. Acute severe asthma exacerbation; 2. Viral chest infection triggering wheeze; 3. Pneumonia
**Advice:** Give 10 puffs of her blue reliever inhaler through the spacer now, one puff at a time, and call 999. \
If she becomes drowsy, can't talk, or her lips look blue, tell the call handler immediately.""",
                                  2, "emergency", "asthma"),
    "bold-underscores-conjunctivitis": ("""__Assessment:__
__Triage level:__ ESI 5
__Escalation:__ self-care
__Diagnoses:__ 1. Acute bacterial conjunctivitis; 2. Viral conjunctivitis; 3. Allergic conjunctivitis
__Advice:__ Clean the eyelids with cooled boiled water, avoid contact lenses, and wash your hands often. A \
pharmacist can advise on chloramphenicol drops. See your GP if it's not better in a week, or urgently if you \
develop pain, light sensitivity or changes in vision.""", 5, "self_care", "conjunctivitis"),
    "bold-back-pain": ("""Thanks — no numbness in the saddle area, normal bladder and bowel control, and no fever, \
so that's reassuring.

**ASSESSMENT**:
**Triage Level:** ESI 5
**Escalation:** Routine
**Diagnoses:** 1. Mechanical low back pain; 2. Lumbar muscle strain; 3. Lumbar disc herniation without nerve \
compromise
**Advice:** Stay as active as you can, use heat and over-the-counter pain relief, and book a routine appointment \
with your GP or a physiotherapist if it's not improving in 2–4 weeks. Seek emergency care if you get numbness \
between your legs, leg weakness, or problems passing urine.""", 5, "routine", "low back pain"),
    "bold-dka": ("""**ASSESSMENT:**
**Triage level:** ESI 2
**Escalation:** Emergency
**Diagnoses:** 1. Diabetic ketoacidosis (likely new-onset type 1 diabetes); 2. Gastroenteritis with \
dehydration; 3. Acute appendicitis
**Advice:** Take him to the emergency department now — call an ambulance if he is very drowsy or breathing fast \
and deep. Bring any urine or glucose readings you have.""", 2, "emergency", "diabetic ketoacidosis"),
    "bold-gastro-self-care": ("""Thanks for all those details. No blood in the stool, you're keeping fluids down and \
still passing urine, so this sounds manageable at home.

**Assessment:**
**Triage level:** ESI 5
**Escalation:** Self care
**Diagnoses:** 1. Viral gastroenteritis; 2. Food poisoning; 3. Early appendicitis (unlikely, no localised pain)
**Advice:** Small frequent sips of oral rehydration solution, rest, and a bland diet as you feel able. Seek \
medical help if you can't keep fluids down for more than 24 hours, see blood in your stool, or get severe \
abdominal pain.""", 5, "self_care", "gastroenteritis"),
}

# -------------------------------------------------------------------------------------------- 3. headings
HEADINGS: dict[str, Case] = {
    "heading-sah": ("""Thank you. A sudden, severe headache that peaked within a minute — the worst of your life — \
needs emergency evaluation.

## Assessment

**Triage level:** ESI 2
**Escalation:** Emergency
**Diagnoses:** 1. Subarachnoid haemorrhage; 2. Intracerebral haemorrhage; 3. Meningitis

## What to do now
Call 911 or have someone drive you to the nearest emergency department immediately. Don't take more painkillers \
and don't lie down alone — keep someone with you.""", 2, "emergency", "subarachnoid"),
    "heading-h3-caps-pe": ("""### ASSESSMENT
- Triage level: ESI 2
- Escalation: emergency
- Diagnoses: 1. Pulmonary embolism; 2. Deep vein thrombosis of the left leg; 3. Pneumonia
- Advice: Go to the emergency department now, by ambulance if you feel faint or very short of breath. Tell them \
about your recent flight and the swollen calf.""", 2, "emergency", "pulmonary embolism"),
    "heading-subsections-otitis": ("""## Final Assessment

### Triage Level
**ESI 4 – Less urgent**

### Escalation
**Urgent** — be seen today

### Most Likely Diagnoses
1. **Acute otitis media** (most likely)
2. Otitis externa
3. Viral upper respiratory infection

### Advice
Give paracetamol or ibuprofen for the pain and fever, and get her seen by her GP or an urgent care clinic today. \
If she becomes very drowsy, develops a stiff neck, or the area behind her ear becomes red and swollen, go to the \
emergency department.""", 4, "urgent", "otitis media"),
    "heading-triage-assessment-metatarsal": ("""# Triage Assessment

Triage level: ESI 4
Escalation: routine
Diagnoses: 1. Possible fifth metatarsal fracture; 2. Lateral ankle sprain; 3. Foot contusion
Advice: Because you have tenderness over the outer edge of the foot, you need an X-ray — arrange one through \
your GP or a minor injuries unit in the next day or two. Until then, rest, ice and elevate, and avoid putting \
full weight on it.""", 4, "routine", "metatarsal fracture"),
    "heading-bold-my-assessment-sepsis": ("""I'm concerned by what you're telling me — a high fever, confusion, \
fast breathing and very little urine.

**My assessment**

Triage level: ESI 1
Escalation: emergency — call an ambulance now
Diagnoses: 1. Sepsis (likely urinary source); 2. Pyelonephritis; 3. Pneumonia
Advice: Call 911 right now. Stay with her, and bring a list of her medications to the hospital.""",
                                          1, "emergency", "sepsis"),
    "heading-emoji-gi-bleed": ("""## 🩺 Assessment

- **Triage level:** ESI 2
- **Escalation:** Emergency
- **Diagnoses:**
  1. Upper gastrointestinal bleed (possibly a bleeding ulcer)
  2. Bleeding peptic ulcer
  3. Acute gastritis
- **Advice:** Call 999 now. Do not eat or drink, and do not take any more ibuprofen. If you feel faint, lie down \
with your legs raised.""", 2, "emergency", "gastrointestinal bleed"),
    "heading-bare-word-lyme": ("""Thanks for sending the description of the rash — a slowly expanding bullseye rash \
after a tick bite is quite characteristic.

ASSESSMENT
Triage level: ESI 5
Escalation: routine
Diagnoses: Early localized Lyme disease (erythema migrans); Cellulitis; Tick bite hypersensitivity reaction
Advice: Make an appointment with your primary care doctor in the next few days — this is usually treated with a \
course of doxycycline without blood tests. If you develop facial drooping, palpitations or a severe headache, \
seek care sooner.""", 5, "routine", "lyme disease"),
    "heading-assessment-and-plan-croup": ("""## Assessment & Plan

**Triage level:** ESI 3
**Escalation:** Urgent
**Differential diagnoses:**
1. **Croup** (viral laryngotracheobronchitis) — most likely
2. Bacterial tracheitis
3. Inhaled foreign body

**Plan:**
- Take him to an urgent care centre or out-of-hours GP tonight; he will probably need a single dose of steroid.
- Cool night air or a steamy bathroom may ease the cough in the meantime.
- Call 911 if he has noisy breathing at rest, pulls in at the ribs, drools, or looks blue.""",
                                          3, "urgent", "croup"),
}

# --------------------------------------------------------------------------------------------- 4. bullets
BULLETS: dict[str, Case] = {
    "bullets-star-stroke": ("""Based on what you've told me, here is my assessment:

**Assessment:**
* **Triage level:** ESI 1
* **Escalation:** Emergency
* **Diagnoses:** 1. Acute stroke; 2. Transient ischemic attack; 3. Hypoglycemia
* **Advice:** Call 911 right now. Note the time she was last seen well. Don't give her food, drink or \
medication.""", 1, "emergency", "stroke"),
    "bullets-nested-under-label-shingles": ("""- Assessment:
  - Triage level: ESI 4
  - Escalation: urgent
  - Diagnoses: 1. Shingles (herpes zoster); 2. Contact dermatitis; 3. Insect bites
  - Advice: See your GP or a pharmacist today or tomorrow — antiviral tablets work best if started within 72 \
hours of the rash appearing. Keep the rash covered and avoid pregnant women and newborns.""",
                                            4, "urgent", "shingles"),
    "bullets-dash-torsion": ("""Thank you for telling me — I know this is uncomfortable to talk about.

ASSESSMENT:
- Triage level: ESI 2
- Escalation: emergency
- Diagnoses: 1. Testicular torsion; 2. Torsion of the appendix testis; 3. Epididymo-orchitis
- Advice: Go to the emergency department immediately — this is time-critical and the testicle can be saved if \
treated within about six hours. Don't eat or drink in case you need surgery.""",
                             2, "emergency", "testicular torsion"),
    "bullets-dot-refill": ("""ASSESSMENT:
• Triage level: ESI 5
• Escalation: routine
• Diagnoses: 1. Essential hypertension, well controlled; 2. Repeat prescription request
• Advice: Contact your GP surgery to request your amlodipine refill — most can issue it within 48 hours, and a \
pharmacist can give an emergency supply if you run out before then. Keep checking your blood pressure at home.""",
                           5, "routine", "hypertension"),
    "bullets-nested-differential-pneumothorax": ("""**Assessment:**

- **Triage level:** ESI 3
- **Escalation:** Emergency
- **Differential diagnosis:**
  - Primary spontaneous pneumothorax (most likely given sudden sharp pain and breathlessness in a tall young man)
  - Pleurisy
  - Pulmonary embolism
- **Advice:** Go to the emergency department now for a chest X-ray. Don't fly or go diving until you've been \
cleared.""", 3, "emergency", "pneumothorax"),
    "bullets-numbered-fields-concussion": ("""Thanks for checking those things with him.

**Assessment:**
1. **Triage level:** ESI 3
2. **Escalation:** Urgent
3. **Diagnoses:** 1. Concussion; 2. Scalp haematoma; 3. Intracranial bleed (needs to be excluded)
4. **Advice:** Have him seen at an urgent care centre or emergency department within the next few hours, \
because he vomited twice. Someone should stay with him tonight. Call 911 if he becomes hard to wake, has a \
seizure, or vomits again repeatedly.""", 3, "urgent", "concussion"),
    "bullets-emoji-kidney-stone": ("""**ASSESSMENT:**
- 🔶 **Triage level:** ESI 3
- 🔶 **Escalation:** Urgent
- 🔶 **Diagnoses:** 1. Renal colic (kidney stone); 2. Pyelonephritis; 3. Musculoskeletal back pain
- 🔶 **Advice:** Take ibuprofen if you can, drink water, and get seen at urgent care today for a urine test and \
pain relief. If you develop a fever, shaking chills, or can't keep fluids down, go to the ER.""",
                                   3, "urgent", "renal colic"),
    "bullets-likelihood-labels-gout": ("""Here's where I've landed.

Assessment -
- Triage level: ESI 4
- Escalation: routine
- Differential:
    - Most likely: Gout flare of the big toe
    - Less likely: Cellulitis
    - Consider: Septic arthritis if fever develops
- Advice: Rest and elevate the foot, use ice, and take an anti-inflammatory if it's safe for you. Book an \
appointment with your GP this week. Go to the emergency department if you get a fever or the redness spreads up \
your foot.""", 4, "routine", "gout"),
}

# ---------------------------------------------------------------------------------------------- 5. tables
TABLES: dict[str, Case] = {
    "table-item-details-acs": ("""Thanks — that's everything I need.

## Assessment

| Item | Details |
|---|---|
| **Triage level** | ESI 2 |
| **Escalation** | Emergency |
| **Diagnoses** | 1. Acute coronary syndrome; 2. Aortic dissection; 3. Pulmonary embolism |
| **Advice** | Call 911 now and chew an aspirin if you're not allergic. |""", 2, "emergency", "acute coronary"),
    "table-after-bold-label-uti": ("""**ASSESSMENT:**

| Field | Value |
|-------|-------|
| Triage level | ESI 5 |
| Escalation | Routine |
| Diagnoses | 1. Uncomplicated cystitis; 2. Urethritis; 3. Chlamydia |
| Advice | Book a GP or sexual health appointment in the next couple of days; drink plenty of fluids. Get seen \
same day if you develop fever or back pain. |""", 5, "routine", "cystitis"),
    "table-one-row-per-field-anaphylaxis": ("""### Assessment

| Triage level | Escalation | Most likely diagnosis |
|:---:|:---:|:---|
| ESI 1 | Emergency | Anaphylaxis |

**Other possibilities:** angioedema, severe asthma attack.

**Advice:** Use the EpiPen now, call 999, and lie down with your legs raised. A second dose can be given after \
5 minutes if there's no improvement.""", 1, "emergency", "anaphylaxis"),
    "table-br-list-preeclampsia": ("""## ASSESSMENT

| | |
|---|---|
| **Triage level** | **ESI 2** |
| **Escalation** | **Emergency** – go to labour ward / ED now |
| **Diagnoses** | 1. Pre-eclampsia with severe features<br>2. HELLP syndrome<br>3. Gestational hypertension |
| **Advice** | Call your maternity unit on the way, or 911 if you have a seizure, severe headache or vision loss. \
Don't drive yourself. |""", 2, "emergency", "pre-eclampsia"),
    "table-ranked-differential-appendicitis": ("""## Assessment

| Category | Assessment |
|---|---|
| Triage level | ESI 3 |
| Escalation | Emergency department today |

**Differential diagnoses:**

| # | Diagnosis | Likelihood |
|---|---|---|
| 1 | Acute appendicitis | High |
| 2 | Mesenteric adenitis | Moderate |
| 3 | Constipation | Low |

**Advice:** Take her to the emergency department now. Nothing to eat or drink until a doctor has seen her.""",
                                               3, "emergency", "appendicitis"),
    "table-disposition-cold": ("""**Assessment**

| Triage | Details |
|---|---|
| ESI level | 5 (non-urgent) |
| Disposition | Self-care at home |
| Likely diagnosis | Common cold (viral URTI) |
| Also consider | Allergic rhinitis, early sinusitis |

Rest, fluids and paracetamol should see you through. See your GP if it lasts more than 10 days or you have a \
high fever.""", 5, "self_care", "common cold"),
    "table-emoji-heading-ectopic": ("""## ⚠️ Triage Assessment

| Parameter | Finding |
|---|---|
| Triage level | ESI 2 (Emergent) |
| Escalation | **Emergency** – call an ambulance |
| Diagnoses | Ruptured ectopic pregnancy; threatened miscarriage; ruptured ovarian cyst |

**Please call 911 now.** Lie down while you wait and don't eat or drink anything. Someone should stay with \
you.""", 2, "emergency", "ectopic pregnancy"),
    "table-header-is-assessment-migraine": ("""| Assessment | |
|---|---|
| Triage level | ESI 4 |
| Escalation | Routine – see your GP within 1–2 weeks |
| Diagnoses | 1. Migraine without aura; 2. Tension-type headache; 3. Medication-overuse headache |
| Advice | Keep a headache diary, limit painkillers to 2–3 days a week, and book a GP review. Seek urgent help for \
a sudden severe headache or new weakness. |""", 4, "routine", "migraine"),
}

# -------------------------------------------------------------------------------- 6. prose lead-in, then block
LEAD_IN: dict[str, Case] = {
    "leadin-febrile-infant": ("""Thank you for being so clear about all of this — I know it's frightening when your \
child is this unwell.

From what you've described, your baby is only 6 weeks old and has a temperature of 38.4°C. In babies under 3 \
months, any fever needs to be checked urgently by a doctor, even if they otherwise seem okay, because their immune \
systems can't always contain an infection.

ASSESSMENT:
Triage level: ESI 2
Escalation: emergency
Diagnoses: 1. Serious bacterial infection (e.g. urinary tract infection or sepsis) until proven otherwise; 2. \
Viral infection; 3. Meningitis
Advice: Take her to the emergency department now. Don't give paracetamol before she's been seen unless a doctor \
tells you to.""", 2, "emergency", "serious bacterial infection"),
    "leadin-anxious-mi": ("""I hear that you've had panic attacks before and that this feels similar. But there are \
some things here that make me want to be careful: you're 58, the pressure is spreading into your jaw, you're \
sweaty and it's been going on for 30 minutes. Panic attacks can cause chest tightness, but we can't assume that's \
what this is.

**Assessment:**
**Triage level:** ESI 2
**Escalation:** Emergency
**Diagnoses:** 1. Acute coronary syndrome; 2. Panic attack; 3. Aortic dissection
**Advice:** Call an ambulance now. It is much better to be checked and find it's anxiety than to miss a heart \
attack.""", 2, "emergency", "acute coronary"),
    "leadin-summary-chest-wall": ("""Okay, thank you. Let me summarise what I've understood.

The pain started after you moved furniture yesterday, it's sharp and on the left side, it gets worse when you \
press on your chest or twist, and you have no shortness of breath, sweating, or pain spreading to your arm or \
jaw. You're 24 and otherwise healthy.

That pattern is very typical of a muscle or rib-cartilage strain rather than a heart or lung problem.

## Assessment
- **Triage level:** ESI 5
- **Escalation:** Self-care
- **Diagnoses:** 1. Costochondritis / chest wall strain; 2. Pectoral muscle strain; 3. Anxiety
- **Advice:** Rest, apply heat, and take ibuprofen with food for a few days. Seek urgent care if the pain \
changes, you become breathless, or you feel faint.""", 5, "self_care", "costochondritis"),
    "leadin-heres-my-assessment-suicidal": ("""Thank you for trusting me with this. It took real courage to tell me \
you've been thinking about ending your life and that you have a plan. You don't have to go through this alone, \
and help is available right now.

Here's my assessment:

ASSESSMENT:
Triage level: ESI 2
Escalation: emergency
Diagnoses: 1. Suicidal ideation with a plan; 2. Severe depressive episode; 3. Alcohol use disorder
Advice: Please call 988 (or 911) now, or ask someone to take you to the nearest emergency department. If you can, \
put the tablets somewhere out of reach and stay with someone you trust until you're seen.""",
                                            2, "emergency", "suicidal ideation"),
    "leadin-tension-headache": ("""Thanks, that's helpful. A band-like pressure around your head that builds through \
the workday, with no vomiting, no visual changes, no weakness, and nothing sudden about it — that's reassuring.

Given how long you've had it and how much screen time and stress you've described, this looks most like a \
tension-type headache.

**Assessment**:
Triage level: ESI 5
Escalation: self care
Diagnoses: 1. Tension-type headache; 2. Eye strain; 3. Migraine without aura
Advice: Regular breaks from the screen, hydration, and simple painkillers (no more than 2–3 days a week). See \
your GP if the headaches become more frequent or don't improve in a few weeks.""",
                                5, "self_care", "tension-type headache"),
    "leadin-dash-label-diabetic-foot": ("""I'm glad you sent me that description of your foot. A black area on the \
toe with a bad smell, in someone with diabetes and reduced feeling in the feet, is an infection that can spread \
quickly.

My assessment -
Triage level: ESI 2
Escalation: emergency
Diagnoses: 1. Diabetic foot ulcer with gangrene; 2. Osteomyelitis; 3. Cellulitis
Advice: Go to the emergency department today — ideally now. Keep the foot clean and covered and don't walk on it \
more than you have to.""", 2, "emergency", "diabetic foot"),
    "leadin-bold-prose-aaa": ("""Thank you. **Sudden tearing pain in your belly and back at 72, with a history of high \
blood pressure and smoking**, is something we treat as an emergency until proven otherwise — I'd rather you be \
checked quickly and reassured than wait.

### ASSESSMENT
**Triage level:** ESI 1
**Escalation:** Emergency
**Diagnoses:**
1. Ruptured abdominal aortic aneurysm
2. Renal colic
3. Aortic dissection

**Advice:** Call 911 now. Lie down and don't eat or drink anything.""", 1, "emergency", "abdominal aortic aneurysm"),
    "leadin-lowercase-hay-fever": ("""Thanks for the extra detail. Sneezing, itchy eyes and a clear runny nose every \
spring, with no fever and no breathing problems, is classic hay fever.

assessment:
triage level: ESI 5
escalation: self_care
diagnoses: 1. allergic rhinitis (hay fever); 2. allergic conjunctivitis; 3. viral cold
advice: a non-drowsy antihistamine such as cetirizine and a steroid nasal spray from the pharmacy should help. \
See your GP if these don't work after two weeks.""", 5, "self_care", "allergic rhinitis"),
}

# ----------------------------------------------------------------------------------------- 7. bold values
BOLD_VALUES: dict[str, Case] = {
    "values-stemi": ("""ASSESSMENT:
Triage level: **ESI 2 (Emergent)**
Escalation: **Emergency**
Diagnoses: **1. Acute anterior STEMI; 2. Unstable angina; 3. Acute pericarditis**
Advice: **Call 911 now.** Chew an aspirin if you're not allergic, and unlock your front door.""",
                     2, "emergency", "stemi"),
    "values-bold-both-meningitis": ("""**ASSESSMENT:**
**Triage level:** **ESI 2**
**Escalation:** **Emergency** (call 911)
**Diagnoses:** **1. Bacterial meningitis; 2. Viral meningitis; 3. Influenza**
**Advice:** Call 911 or go straight to the nearest emergency department. Tell them about the rash that doesn't \
fade under a glass.""", 2, "emergency", "bacterial meningitis"),
    "values-urgent-same-day-gp-strep": ("""Assessment:
Triage level: **ESI 4**
Escalation: **Urgent** – same-day GP or urgent care
Diagnoses: **Streptococcal pharyngitis**; viral pharyngitis; infectious mononucleosis
Advice: Get seen today for a throat swab and possibly antibiotics. Paracetamol and ibuprofen help with the pain. \
If you can't swallow your saliva, can't open your mouth, or have trouble breathing, go to the ER.""",
                                        4, "urgent", "streptococcal pharyngitis"),
    "values-italic-qualifiers-cold": ("""**Assessment:**
Triage level: **ESI 5** *(non-urgent)*
Escalation: **Self-care** at home
Diagnoses: 1. **Common cold** *(most likely)*; 2. *Influenza*; 3. *COVID-19*
Advice: Rest, fluids, honey and lemon for the throat, and paracetamol for aches. Testing for COVID is reasonable \
if you have a home test.""", 5, "self_care", "common cold"),
    "values-routine-eczema": ("""**Assessment:**
- Triage level: **ESI 5**
- Escalation: **Routine**
- Diagnoses: **Atopic eczema flare**; contact dermatitis; fungal skin infection
- Advice: Use a thick emollient several times a day and a mild steroid cream from the pharmacist for up to a \
week. Book a routine GP appointment if it hasn't settled in two weeks. If the skin becomes weepy, crusted or very \
painful, get it checked the same day.""", 5, "routine", "eczema"),
    "values-em-dash-heat-stroke": ("""Assessment:
Triage level: **ESI 1 — Resuscitation**
Escalation: **Emergency — call an ambulance now**
Diagnoses: **1. Heat stroke**; 2. Heat exhaustion; 3. Sepsis
Advice: Call 911. Move him into the shade, remove extra clothing, and cool him with water and fanning while you \
wait. Don't give him anything to drink if he's confused.""", 1, "emergency", "heat stroke"),
    "values-level-emergent-glaucoma": ("""Thank you — the combination of a painful red eye, blurred vision with \
halos, headache and vomiting is worrying.

**Assessment:**
Triage level: **Level 2 (Emergent)**
Escalation: **Emergency** – go to the emergency department or eye casualty now
Diagnoses: 1. **Acute angle-closure glaucoma**; 2. Anterior uveitis; 3. Migraine
Advice: Don't wait to see if it settles; this needs treatment within hours to protect your sight. Don't drive \
yourself.""", 2, "emergency", "angle-closure glaucoma"),
    "values-bullets-burn": ("""## Assessment
- Triage level: **ESI 4**
- Escalation: **Urgent** (same day)
- Diagnoses: **1. Partial-thickness (second-degree) burn of the forearm**; 2. Superficial burn
- Advice: Cool it under running water for 20 minutes if you haven't already, cover it loosely with cling film, \
and get it assessed today at a minor injuries unit or urgent care. Don't pop the blisters.""",
                            4, "urgent", "partial-thickness"),
}

# ---------------------------------------------------- 8. safety-netting after the block, naming other escalations
TRAILING_ADVICE: dict[str, Case] = {
    "trailing-back-pain-call-911": ("""ASSESSMENT:
Triage level: ESI 5
Escalation: routine
Diagnoses: 1. Mechanical low back pain; 2. Lumbar muscle strain; 3. Sciatica
Advice: Keep moving, use heat and simple painkillers, and see your GP next week if it hasn't eased.

**When to seek help sooner:**
- If you lose control of your bladder or bowels, or get numbness between your legs, call 911 or go to the \
emergency department immediately.
- If the pain becomes severe and unrelenting, or you develop a fever, get seen the same day at urgent care.""",
                                    5, "routine", "low back pain"),
    "trailing-uri-safety-net": ("""**Assessment:**
**Triage level:** ESI 5
**Escalation:** self_care
**Diagnoses:** 1. Viral upper respiratory tract infection; 2. Allergic rhinitis
**Advice:** Rest, fluids and paracetamol.

⚠️ **Safety-netting:** If your temperature stays above 39°C for more than 3 days, see your GP. If you become \
short of breath, have chest pain or feel confused, go to the ER or call an ambulance.""",
                                5, "self_care", "viral upper respiratory"),
    "trailing-pyelo-could-become-emergency": ("""## Assessment

**Triage level:** ESI 3
**Escalation:** Urgent
**Diagnoses:** 1. Acute pyelonephritis; 2. Kidney stone with infection; 3. Acute cystitis

**Advice:** Please get seen today — an urgent care clinic or your GP's same-day appointments are fine.

This isn't an emergency right now, but it could become one. If you start vomiting and can't keep fluids down, \
feel faint or confused, or the fever goes above 39.5°C despite paracetamol, go to the emergency department or \
call 911. Otherwise, once you've started antibiotics, book a routine follow-up with your GP in a week to check \
the urine has cleared.""", 3, "urgent", "pyelonephritis"),
    "trailing-tia-then-gp": ("""ASSESSMENT:
Triage level: ESI 2
Escalation: emergency
Diagnoses: 1. Transient ischaemic attack; 2. Minor ischaemic stroke; 3. Hypoglycaemia
Advice: Even though the weakness has gone, go to the emergency department now — the risk of a full stroke is \
highest in the first 48 hours.

Once you've been seen and discharged, make a routine appointment with your GP to review your blood pressure and \
cholesterol medication. Self-care measures like stopping smoking will also help long term.""",
                             2, "emergency", "transient ischaemic attack"),
    "trailing-lyme-red-flags": ("""**ASSESSMENT:**
- **Triage level:** ESI 4
- **Escalation:** Routine
- **Diagnoses:** 1. Lyme disease, early localized (erythema migrans); 2. Cellulitis
- **Advice:** Book an appointment with your primary care doctor in the next few days for antibiotics.

**Red flags — seek care urgently if:**
- You develop facial weakness, a severe headache or a stiff neck → urgent care today
- You get chest pain, fainting or palpitations → call 911""", 4, "routine", "lyme disease"),
    "trailing-sprain-note": ("""Assessment:
Triage level: ESI 5
Escalation: self care
Diagnoses: 1. Mild ankle sprain; 2. Ankle contusion
Advice: Rest, ice, compression and elevation for 48 hours; paracetamol or ibuprofen for pain.

Note: if you still can't put weight on it after 5–7 days, book an appointment with your GP or physio. If the foot \
becomes cold, numb or very swollen, or you can't walk at all, go to urgent care or the ER for an X-ray.""",
                             5, "self_care", "ankle sprain"),
    "trailing-cellulitis-italic-footer": ("""### ASSESSMENT
**Triage level:** ESI 4
**Escalation:** Urgent — see a doctor within 24 hours
**Differential diagnosis:**
1. **Cellulitis of the right leg**
2. Deep vein thrombosis
3. Venous stasis dermatitis

**Advice:** Draw around the red area with a pen and arrange a same-day GP or urgent care appointment for \
antibiotics.

---

*If you develop a high fever, shivering, confusion, or the redness spreads rapidly past the line, this becomes an \
emergency: call 999. If it's improving on antibiotics, a routine review with your GP in 5–7 days is enough.*""",
                                          4, "urgent", "cellulitis"),
    "trailing-pe-not-self-care": ("""**My assessment:**

**Triage level:** ESI 2
**Escalation:** Emergency
**Diagnoses:**
1. Pulmonary embolism
2. Pneumonia
3. Pleurisy

**Advice:** Go to the emergency department now. If you feel faint or very breathless on the way, call an \
ambulance.

I know you were hoping this was something you could manage at home with rest — and it may still turn out to be \
something minor — but with a swollen calf after a long flight and sudden breathlessness, this isn't one for \
self-care or waiting for a routine GP appointment.""", 2, "emergency", "pulmonary embolism"),
}

# ---------------------------------------------------------------------------------------------- 9. mixes
MIXES: dict[str, Case] = {
    "mix-numbered-fields-esi-hyphen": ("""ASSESSMENT:
1. Triage level: ESI-2
2. Escalation: Emergency
3. Diagnoses: Acute coronary syndrome; aortic dissection; pericarditis
4. Advice: Call 911 now.""", 2, "emergency", "acute coronary"),
    "mix-esi-level-disposition-ectopic": ("""**Assessment:**
- **ESI level:** 2
- **Disposition:** Emergency department now (ambulance)
- **Working diagnosis:** Ectopic pregnancy
- **Differential:** ruptured ovarian cyst, appendicitis, miscarriage
- **Advice:** Call 911. Don't eat or drink anything.""", 2, "emergency", "ectopic pregnancy"),
    "mix-triage-colon-number-renal-colic": ("""Alright, here's my assessment.

Assessment:
Triage: 3
Disposition: Urgent care today
Differential diagnosis:
1. Renal colic — most likely
2. Pyelonephritis
3. Biliary colic
Plan: Take ibuprofen now, drink water, and get to an urgent care clinic within the next few hours.""",
                                            3, "urgent", "renal colic"),
    "mix-acuity-level-emergent-stroke": ("""### Assessment
**Acuity:** Level 2 (emergent)
**Disposition:** ED now — call 911
**Differential diagnoses:**
- **Acute ischemic stroke** (most likely — last known well 40 minutes ago)
- Intracranial hemorrhage
- Todd's paralysis after an unwitnessed seizure

**Advice:** Call 911 now; do not give aspirin until a brain scan has ruled out bleeding.""",
                                         2, "emergency", "ischemic stroke"),
    "mix-nested-detail-bullets-acs": ("""**ASSESSMENT:**
**Triage level:** ESI 2 – Emergent
**Escalation:** Emergency
**Differential diagnoses:**
1. **Acute coronary syndrome** (most likely)
   - Crushing central chest pain, sweating, radiation to the left arm
2. **Aortic dissection**
   - Less likely, but the pain started abruptly
3. **Pulmonary embolism**
**Safety netting:** If the pain gets worse before the ambulance arrives, chew an aspirin and call back.
**Advice:** Call 911 now.""", 2, "emergency", "acute coronary syndrome"),
    "mix-recommended-disposition-otitis-externa": ("""Assessment:
Triage level: 4 (less urgent)
Recommended disposition: Routine — GP appointment within the next week
Diagnoses: Otitis externa, ear wax impaction, acute otitis media
Advice: Keep the ear dry and avoid cotton buds. Book with your GP or pharmacist for ear drops.""",
                                                   4, "routine", "otitis externa"),
    "mix-esi-hyphen-bold-self-care-underscore": ("""**Assessment:**
**Triage level:** ESI-5
**Escalation:** **Self_care**
**Diagnosis:** Most likely a mild viral gastroenteritis; food poisoning is also possible
**Advice:** Small frequent sips of fluid, rest, and plain food as tolerated. Seek medical help if you see blood, \
can't keep fluids down for 24 hours, or become very drowsy.""", 5, "self_care", "viral gastroenteritis"),
    "mix-final-assessment-bold-pneumonia": ("""**Final assessment**

Triage: ESI 3
Escalation: Urgent care (same day)
Differential:
- Community-acquired pneumonia
- Acute bronchitis
- COVID-19
Advice: Get seen today for a chest examination and possibly an X-ray. Call an ambulance if your lips go blue or \
you can't complete a sentence.""", 3, "urgent", "pneumonia"),
    "mix-call-ambulance-parenthetical-bee-sting": ("""Thanks. Here's my conclusion.

**Assessment**
1. **Triage level:** ESI 1
2. **Escalation:** Call an ambulance (emergency)
3. **Diagnoses:** Anaphylaxis to bee sting; severe allergic reaction; asthma attack
4. **Advice:** Use the EpiPen now into the outer thigh, then call 911. Lie down with your legs up unless you're \
struggling to breathe.""", 1, "emergency", "anaphylaxis"),
    "mix-go-to-the-er-appendicitis": ("""ASSESSMENT:
Triage level: ESI 3
Escalation: Go to the ER tonight
Diagnoses: 1. Appendicitis; 2. Ovarian cyst; 3. Ectopic pregnancy
Advice: Don't eat anything in case you need surgery.""", 3, "emergency", "appendicitis"),
    "mix-book-appointment-anaemia": ("""**Assessment:**
**Triage level:** ESI 5
**Escalation:** Book an appointment with your GP in the next few days
**Diagnoses:** 1. Iron-deficiency anaemia; 2. Hypothyroidism; 3. Depression
**Advice:** Ask for blood tests (full blood count, ferritin, thyroid function).""", 5, "routine", "iron-deficiency"),
    "mix-home-care-teething": ("""Assessment:
- Triage level: ESI 5
- Escalation: Home care
- Diagnoses: Teething; viral illness
- Advice: Chilled teething rings and paracetamol if he's uncomfortable. Call back if he stops feeding or has a \
fever over 38°C.""", 5, "self_care", "teething"),
}

# ------------------------------------------------------------------ 10. more chat habits (emoji, rules, setext)
MORE_CHAT: dict[str, Case] = {
    "more-gpt-emoji-heading-pyelo": ("""Thank you for sharing all of that. Based on your symptoms, here's my assessment:

---

### 🏥 **ASSESSMENT**

**Triage Level:** ESI 3 (Urgent)

**Escalation:** 🟠 **Urgent** — You should be seen within the next few hours.

**Diagnoses:**
1. **Acute pyelonephritis** – fever, flank pain, and urinary symptoms point to a kidney infection.
2. **Kidney stone with secondary infection**
3. **Acute cystitis** with systemic symptoms

**Advice:**
- Go to an urgent care center **today**.
- Stay hydrated.
- If you develop vomiting, confusion, or can't keep fluids down → **go to the ER immediately**.

---

Please don't hesitate to reach out if anything changes. Take care! 💙""",
        3, "urgent", "pyelonephritis"),
    "more-heading-then-prose-acs": ("""**Assessment**

Based on what you've described, I'd place this at **ESI level 2**. This needs **emergency** care — please \
call 911 now.

Most likely diagnoses:
1. Acute coronary syndrome
2. Aortic dissection
3. Pulmonary embolism""",
        2, "emergency", "acute coronary"),
    "more-label-with-sentence-migraine": ("""**Assessment:** Based on your symptoms, I believe you are experiencing a \
migraine.

**Triage Level:** ESI 4
**Escalation:** Routine
**Diagnoses:**
* Migraine without aura
* Tension headache
* Sinusitis

**Advice:** Rest in a dark room and take your usual medication.""",
        4, "routine", "migraine"),
    "more-bold-only-field-headings-sepsis": ("""## Assessment

**Triage level**
ESI 2 — emergent

**Escalation**
Emergency: call 999 now

**Diagnoses**
- Sepsis
- Pneumonia""",
        2, "emergency", "sepsis"),
    "more-most-likely-label-migraine": ("""### Assessment
**Triage:** ESI 4
**Escalation:** Routine
**Most likely:** Migraine with aura
**Also consider:** TIA (less likely given your age)""",
        4, "routine", "migraine"),
    "more-escalation-emergent-ectopic": ("""**ASSESSMENT:**
**Triage level:** ESI 2
**Escalation:** Emergent
**Diagnoses:** Ectopic pregnancy""",
        2, "emergency", "ectopic"),
    "more-blockquote-acs": ("""> **ASSESSMENT:**
> **Triage level:** ESI 2
> **Escalation:** Emergency
> **Diagnoses:** 1. ACS; 2. PE""",
        2, "emergency", "acs"),
    "more-numbered-dash-labels-acs": ("""ASSESSMENT:
1. **Triage level** – ESI 2
2. **Escalation** – Emergency
3. **Diagnoses** – Acute coronary syndrome, aortic dissection""",
        2, "emergency", "acute coronary"),
    "more-parenthesised-numbers-pyelo": ("""Assessment:
Triage level: ESI 3
Escalation: urgent
Diagnoses: (1) Pyelonephritis, (2) renal colic""",
        3, "urgent", "pyelonephritis"),
    "more-heading-colon-non-urgent": ("""## ASSESSMENT:
- Triage level: ESI 5
- Escalation: Non-urgent (routine GP)
- Diagnoses: Seborrhoeic keratosis""",
        5, "routine", "seborrhoeic"),
    "more-assessment-and-plan-croup": ("""**Assessment and Plan:**
- **Triage level:** ESI 3
- **Escalation:** Urgent
- **Diagnoses:** Croup""",
        3, "urgent", "croup"),
    "more-urgency-field-torsion": ("""Triage Assessment:
Urgency: Emergency (ESI 2)
Diagnoses: Testicular torsion""",
        2, "emergency", "testicular"),
    "more-esi-triage-level-anaphylaxis": ("""ASSESSMENT:
ESI Triage Level: 2
Escalation: emergency
Diagnoses: Anaphylaxis""",
        2, "emergency", "anaphylaxis"),
    "more-table-no-spaces-cellulitis": ("""**ASSESSMENT**
| | |
|--|--|
|Triage level|ESI 4|
|Escalation|Urgent (same day)|
|Diagnoses|Cellulitis; DVT|""",
        4, "urgent", "cellulitis"),
    "more-nested-advice-appendicitis": ("""Okay — thanks for your patience with all my questions. 🙏

**My Assessment:**

- **Triage Level:** **ESI 3** – Urgent
- **Escalation:** **Urgent** – please be seen **today**
- **Diagnoses:**
    1. **Acute appendicitis** (most concerning)
    2. **Ovarian cyst**
    3. **Gastroenteritis**
- **Advice:**
    - Go to urgent care or the ER today for an exam and blood tests.
    - Don't eat until you've been seen.""",
        3, "urgent", "appendicitis"),
    "more-setext-heading-stroke": ("""ASSESSMENT
===========
Triage level: ESI 2
Escalation: emergency
Diagnoses: Stroke""",
        2, "emergency", "stroke"),
    "more-table-esi-row-kidney-stone": ("""**Triage Assessment**

| Field | Details |
|---|---|
| ESI | 3 |
| Escalation | Urgent care today |
| Differential | 1. Kidney stone 2. Pyelonephritis 3. Appendicitis |""",
        3, "urgent", "kidney stone"),
}

FINAL_STYLES: dict[str, dict[str, Case]] = {
    "plain": PLAIN, "bold_labels": BOLD_LABELS, "headings": HEADINGS, "bullets": BULLETS, "tables": TABLES,
    "lead_in": LEAD_IN, "bold_values": BOLD_VALUES, "trailing_advice": TRAILING_ADVICE, "mixes": MIXES,
    "more_chat": MORE_CHAT,
}
FINAL = [pytest.param(*case, id=name) for cases in FINAL_STYLES.values() for name, case in cases.items()]


@pytest.mark.parametrize(("reply", "level", "escalation", "first_dx"), FINAL)
def test_final_reply_is_read(reply: str, level: int, escalation: str, first_dx: str) -> None:
    assert is_assessment(reply)
    parsed = parse_assessment(reply)
    assert parsed.triage_level == level, parsed.problems
    assert parsed.escalation == escalation, parsed.problems
    assert parsed.diagnoses, parsed.problems
    assert first_dx in parsed.diagnoses[0].lower(), parsed.diagnoses
    assert parsed.form is not None


def test_enough_final_cases_per_style() -> None:
    assert len(FINAL) >= 64
    assert all(len(cases) >= 6 for cases in FINAL_STYLES.values())


# ------------------------------------------------------------------------------------ mid-conversation
MID: dict[str, str] = {
    "before-i-give-my-assessment": "Before I give my assessment, one more question: have you had any fever?",
    "ill-assess-breathing": "I'll assess your breathing: can you count out loud from 1 to 10 in one breath?",
    "assessment-so-far-incomplete": ("My assessment so far is incomplete — can you tell me whether the pain spreads "
                                     "to your arm or jaw?"),
    "to-complete-my-assessment": "To complete my assessment: how long has it lasted?",
    "assessment-of-breathing": "Assessment of your breathing: can you speak in full sentences?",
    "bold-quick-assessment-of": "**Quick assessment of your symptoms:** how long has this been going on?",
    "let-me-finish-my-assessment": "Let me finish my assessment — do you have any allergies to medications?",
    "questions-heading": ("## Questions\n1. When did it start?\n2. Is the pain constant or does it come and go?\n"
                          "3. Have you taken anything for it?"),
    "assessment-of-severity": "Assessment of severity: on a scale of 1-10 how bad is it?",
    "reassessment": ("Reassessment: tomorrow morning if the fever hasn't settled — but first, is she drinking "
                     "normally?"),
    "empathy-bold": ("I'm really sorry you're going through this. **You did the right thing by reaching out.** Can "
                     "you tell me when the pain started?"),
    "bulleted-questions": ("Thanks. A few quick questions so I can work out how urgent this is:\n\n"
                           "- Does the pain spread to your arm, neck or jaw?\n- Are you sweating or feeling sick?\n"
                           "- Do you have any history of heart problems?"),
    "bold-label-question": "**Assessment:** Can you tell me if she has had any vomiting?",
    "heading-then-questions": ("### Assessment\nI'd like to ask a few more questions before I can complete this:\n"
                               "1. Any fever?\n2. Any rash that doesn't fade when you press a glass on it?"),
    "bold-assessment-dash-question": ("**Assessment** — I need a bit more information first. How old is your son, "
                                      "and how high has the fever been?"),
    "to-help-me-assess": ("Thanks for that. To help me assess how serious this is: does the headache get worse when "
                          "you lie down?"),
    "make-sure-assessment-accurate": ("I want to make sure my assessment is accurate. Could you check her "
                                      "temperature again?"),
    "initial-thoughts-heading": ("## Initial thoughts\nYour symptoms *could* be a few things, from a simple muscle "
                                 "strain to something that needs attention sooner. I don't want to guess yet.\n\n"
                                 "**A couple of questions:**\n- Did the pain start suddenly?\n"
                                 "- Are you short of breath?"),
    "blockquote-warning-911": ("> **Important:** If at any point you feel faint or the pain becomes crushing, call "
                               "911 straight away.\n\nWhile we talk, can you tell me what you were doing when it "
                               "started?"),
    "italic-triage-mention": ("Okay. *Triage* isn't something I can finish until I know a little more. **When did "
                              "your last period start?**"),
    "bold-triage-level-mention": ("**Triage level** depends on a few more details. Has he had a wet nappy in the last "
                                  "6 hours?"),
    "quick-assessment-of-risk-factors": ("Let me do a quick assessment of your risk factors:\n1. Do you smoke?\n"
                                         "2. Do you have high blood pressure or diabetes?\n"
                                         "3. Has anyone in your family had a heart attack before 60?"),
    "before-overall-assessment-red-flags": ("Thanks — I'm building up a picture. Before I share my overall "
                                            "assessment, I need to rule out a few red flags:\n\n"
                                            "- ⚠️ Any weakness or numbness in your face, arms or legs?\n"
                                            "- ⚠️ Any trouble speaking?\n- ⚠️ Any loss of vision?"),
    "assessment-in-progress": ("**Assessment in progress** 🩺\n\nJust two more questions:\n"
                               "1. Are you on any blood thinners?\n2. Did you hit your head?"),
    "need-to-assess": "I'll need to assess a few things — first, is she able to drink and keep fluids down?",
    "bold-inline-questions": "Got it. **How long** has the rash been there, and **is it spreading**?",
    "table-of-answers": ("| Symptom | Your answer |\n|---|---|\n| Fever | ? |\n| Cough | Yes |\n"
                         "| Breathlessness | ? |\n\nCould you fill in the two I'm missing?"),
    "plain-label-question": "Assessment: before I can finish, do you have any drug allergies?",
    "bullet-label-question": "- Assessment - how would you rate the pain right now, from 0 to 10?",
    "my-assessment-will-depend": ("My assessment will depend on your answers to these:\n\n"
                                  "**1. Onset:** Did it come on suddenly or gradually?\n"
                                  "**2. Location:** Where exactly is the pain?\n"
                                  "**3. Severity:** How bad is it out of 10?"),
    "heading-cannot-assess-yet": ("## Assessment\n\nI can't give you a full assessment yet — I need to know a bit "
                                  "more.\n\n- Is the headache the worst you've ever had?\n"
                                  "- Did it come on suddenly, like a thunderclap?"),
    "bold-my-assessment-question": ("**My assessment:** I need to know whether she's had her vaccinations — is she "
                                    "up to date?"),
    "emoji-just-to-check": ("That's really helpful, thank you. 😊 **Just to check** — has your doctor ever told you "
                            "that you have asthma?"),
    "numbered-bold-topic-questions": ("Sorry to hear that. Here's what I'd like to know next:\n\n"
                                      "1. **Duration** – how many days has the sore throat lasted?\n"
                                      "2. **Fever** – have you measured your temperature?\n"
                                      "3. **Swallowing** – can you swallow liquids?"),
    "self-assessment": "Self-assessment: how anxious are you feeling right now, on a scale of 0–10?",
    "triage-heading-question": ("### Triage\nI'm still working through the triage questions. Do you have any chest "
                                "pain right now?"),
    "plain-question": "Can you describe the pain? For example, is it sharp, dull, burning or pressure-like?",
    "heading-then-triage-question": ("## Assessment\nTo decide on the triage level, I need to know: is he "
                                     "breathing normally?"),
    "assessment-of-symptoms-so-far-heading": ("### Assessment of your symptoms so far\n- Pain: 7/10\n- Fever: yes\n"
                                              "Anything else I should know?"),
    "bold-label-then-question": "**Assessment:** I'll need a bit more information — when did the rash first appear?",
    "questions-for-my-assessment": ("I'm going to ask a few questions for my assessment:\n1. How old are you?\n"
                                    "2. Any medical conditions?"),
    "bold-next-quick-assessment": "Thanks! **Next, a quick assessment:** can you walk without help?",
    "triage-assessment-pending": "**Triage assessment pending** — please answer: is there any bleeding?",
    "heading-then-prose-and-questions": ("## Assessment\n\nSo far, your symptoms sound like they could be a viral "
                                         "infection, but I want to rule out a few things.\n\n- Any rash?\n"
                                         "- Any stiff neck?"),
    "final-assessment-heading-then-question": ("### Final assessment\nI'll give you my final assessment once I know "
                                               "whether you've had a fever. Have you?"),
    "final-assessment-soon": ("**Final assessment** coming shortly — but first, has the swelling spread to your "
                              "lips or tongue?"),
}


@pytest.mark.parametrize("reply", [pytest.param(text, id=name) for name, text in MID.items()])
def test_mid_conversation_reply_does_not_end_the_encounter(reply: str) -> None:
    assert not is_assessment(reply)
    assert assessment_form(reply) is None
    parsed = parse_assessment(reply)
    assert parsed.form is None and parsed.problems == ["no line beginning 'Assessment:' in the reply"]


def test_enough_mid_cases() -> None:
    assert len(MID) >= 34


# ----------------------------------------------------------------------------------------------- forms
@pytest.mark.parametrize(("reply", "form"), [
    pytest.param("ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. ACS", "plain", id="plain"),
    pytest.param("  my assessment - go to the ER", "plain", id="plain-dash"),
    pytest.param("**ASSESSMENT:**\nTriage level: ESI 2\nEscalation: emergency", "markdown_label", id="bold-label"),
    pytest.param("- Assessment:\n  - Triage level: ESI 4\n  - Escalation: urgent", "markdown_label", id="bullet-label"),
    pytest.param("> **Assessment** — ESI 3, urgent care today", "markdown_label", id="quote-dash"),
    pytest.param("## Assessment\n**Triage level:** ESI 2\n**Escalation:** emergency", "heading", id="heading"),
    pytest.param("**My assessment**\n\nTriage level: ESI 5\nEscalation: self_care", "heading", id="bold-only"),
    pytest.param("## Assessment\n\n| Field | Value |\n|---|---|\n| Triage level | ESI 3 |\n| Escalation | Urgent |",
                 "table", id="table"),
    pytest.param("Can you tell me more?", None, id="none"),
])
def test_form(reply: str, form: str | None) -> None:
    assert assessment_form(reply) == form
    assert parse_assessment(reply).form == form
    assert is_assessment(reply) == (form is not None)


def test_heading_without_level_explains_what_is_missing() -> None:
    p = parse_assessment("## Assessment\n\n**Escalation:** urgent\n**Diagnoses:** 1. Urinary tract infection")
    assert p.form == "heading" and p.triage_level is None
    assert p.escalation == "urgent" and p.diagnoses == ["Urinary tract infection"]
    assert any("triage level" in x for x in p.problems)


def test_heading_without_diagnoses_explains_what_is_missing() -> None:
    p = parse_assessment("### Final Assessment\n- **Triage level:** ESI 3\n- **Escalation:** Urgent\n"
                         "- **Advice:** See a doctor today.")
    assert (p.triage_level, p.escalation, p.diagnoses) == (3, "urgent", [])
    assert any("no diagnoses" in x for x in p.problems)


def test_heading_with_no_fields_is_not_an_assessment() -> None:
    assert not is_assessment("## Assessment\n\nYou've done well to call. I'd like to hear more about the cough.")


def test_escalation_field_wins_over_safety_netting() -> None:
    p = parse_assessment("**Assessment:**\n**Triage level:** ESI 5\n**Escalation:** routine\n**Diagnoses:** Gout\n"
                         "**Advice:** See your GP this week. If it gets worse, call 911 or go to the ER.")
    assert p.escalation == "routine" and p.problems == []


def test_escalation_without_field_is_ambiguous_when_several_are_named() -> None:
    p = parse_assessment("## Assessment\nTriage level: ESI 4\nDiagnoses: Sprain\n\nThis is either an emergency or "
                         "urgent.")
    assert p.escalation is None and any("ambiguous" in x for x in p.problems)
    # a condition makes the second a safety net, so the decision is the first
    p = parse_assessment("## Assessment\nTriage level: ESI 4\nDiagnoses: Sprain\n\nSee your GP next week, or go to "
                         "the emergency department if you cannot walk.")
    assert p.escalation == "routine" and "escalation read from the prose: routine" in p.problems
    assert not any("ambiguous" in x for x in p.problems)


def test_escalation_without_field_from_the_advice() -> None:
    p = parse_assessment("**Assessment:**\n- **Triage level:** ESI 2\n- **Diagnoses:** Ectopic pregnancy\n"
                         "- **Advice:** Call an ambulance now. If it is slow to come, ask someone to drive you to the "
                         "ER, not to your GP.")
    assert p.escalation == "emergency"


def test_question_after_label_counts_when_fields_follow() -> None:
    reply = ("**Assessment:** does that all make sense?\n\n**Triage level:** ESI 3\n**Escalation:** urgent\n"
             "**Diagnoses:** Pyelonephritis")
    assert assessment_form(reply) == "markdown_label"
    assert parse_assessment(reply).triage_level == 3


def test_diagnosis_names_lose_qualifiers_but_keep_their_words() -> None:
    p = parse_assessment("**Assessment:**\n**Triage level:** ESI 2\n**Escalation:** Emergency\n"
                         "**Differential diagnoses:**\n1. **Acute coronary syndrome (STEMI)** (most likely)\n"
                         "2. Aortic dissection – less likely\n3. Possible pulmonary embolism\n"
                         "4. Pericarditis: pain worse lying flat\n\n**Advice:** Call 911.")
    assert p.diagnoses == ["Acute coronary syndrome (STEMI)", "Aortic dissection", "pulmonary embolism",
                           "Pericarditis"]


def test_pain_score_is_not_a_triage_level() -> None:
    p = parse_assessment("Assessment:\nEscalation: urgent\nDiagnoses: Renal colic\nAdvice: your pain level 3/10 now "
                         "is reassuring, but get seen today.")
    assert p.triage_level is None
