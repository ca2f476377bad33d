"""Draw the synthetic images of the imaging items in ``scenarios/library/`` (ours, no third-party data).

Run from anywhere::

    .venv/bin/python scenarios/library/images/generate.py

It rewrites every PNG next to this script. The drawings are deterministic: all randomness comes from
``random.Random(<fixed seed>)``, no font file is used (the few letters are drawn from the 5x7 bitmap
glyphs below) and the PNGs are saved without metadata, so with the pinned Pillow (see
``pyproject.toml``) a re-run reproduces the same bytes. ``--check`` regenerates in memory and exits 1
if any file on disk differs.

These are schematic drawings, not medical images: each shows one finding plainly, so that an item's
answer is known by construction. Ground truth of every image (what was drawn, and nothing else):

``cxr_left_pneumothorax.png`` (512x512 grey, frontal chest X-ray style, "L" marker top right)
    LEFT PNEUMOTHORAX (patient's left = image right): a thin white visceral pleural line runs
    parallel to the left lateral chest wall and apex, with a black, completely lung-marking-free
    space lateral to it; the left lung edge sits about 55 px in from the chest wall. No mediastinal
    shift (not drawn as tension), no other finding. Right lung, heart, ribs, clavicles normal.
    Used by img_cxr_left_pneumothorax (critical: pneumothorax).
``cxr_normal.png`` (512x512 grey, same drawing style and anatomy)
    NORMAL: both lungs reach the chest wall with lung markings to the periphery, sharp costophrenic
    angles, normal heart size (cardiothoracic ratio about 0.45). No finding. Used by img_cxr_normal.
``xr_forearm_radius_fracture.png`` (384x512 grey, AP forearm X-ray style; wrist and hand at the top,
    elbow at the bottom, thumb on the image-left side)
    TRANSVERSE FRACTURE OF THE RADIAL SHAFT (mid-shaft): a dark transverse fracture line across
    the radius with the distal fragment shifted laterally (towards the thumb side) by 12 px, about 40% of a
    shaft width: a visible step. The ulna is intact. No other finding.
    Used by img_forearm_radius_fracture.
``ecg_anterior_stemi.png`` (512x400 RGB, ECG paper 25 mm/s, 10 mm/mV, 4 px per mm; leads II, V2,
    V3 with a 1 mV calibration pulse)
    ANTERIOR ST-ELEVATION MYOCARDIAL INFARCTION PATTERN: sinus rhythm at about 95/min, ST segments
    elevated about 4 mm (0.4 mV) in V2 and V3 running into tall T waves, reciprocal ST depression of
    about 1 mm in II. Used by img_ecg_anterior_stemi (critical: stemi) and by the encounter
    img_chest_pain_ecg_photo (the printout the patient sends).
``ecg_normal_sinus.png`` (same paper and leads)
    NORMAL SINUS RHYTHM at 72/min: upright P before every QRS, PR 0.16 s, narrow QRS, isoelectric
    ST segments, upright T waves in II, V2 and V3. Used by img_ecg_normal_sinus.
``skin_erythema_migrans.png`` (384x384 RGB, skin close-up photo style)
    ERYTHEMA MIGRANS: a bull's-eye (target) lesion, about 220 px across, with a central red patch and a
    small dark punctum (the bite site), a ring of paler, near-normal skin, and an outer expanding red
    ring. Used by img_skin_erythema_migrans and by the encounter img_lyme_rash_photo (the photo the
    patient sends).
``skin_cellulitis_marked.png`` (384x384 RGB, skin photo style)
    SPREADING CELLULITIS: a large, diffuse, poorly demarcated red area; a dark pen line (the border
    drawn at an earlier review) encircles part of it and the redness extends clearly beyond the line,
    most on the upper side. No blister, no black tissue. Used by img_skin_cellulitis_spreading.
``wound_heel_necrosis.png`` (384x384 RGB, wound photo style: a heel on a blue drape)
    NECROTIC (DRY, BLACK) TISSUE: an ulcer on the heel whose bed is mostly black eschar, with yellow
    slough at its margin and a red, inflamed rim. Used by img_wound_heel_necrosis (critical:
    gangrene, the frame being a diabetic foot).
``test_three_lesions.png`` (256x256 grey)
    PIPELINE TEST: exactly THREE dark round spots of different sizes on a uniform light background,
    well separated; nothing else. Used by img_test_lesion_count (answer: 3).
"""

from __future__ import annotations

import io
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------- helpers

# 5x7 bitmap glyphs for the few characters drawn (no font files: identical output everywhere)
_GLYPHS = {
    "I": ["11111", "00100", "00100", "00100", "00100", "00100", "11111"],
    "V": ["10001", "10001", "10001", "10001", "01010", "01010", "00100"],
    "L": ["10000", "10000", "10000", "10000", "10000", "10000", "11111"],
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
}


def draw_text(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, scale: int,
              fill: int | tuple[int, ...]) -> None:
    """Draw ``text`` with the 5x7 bitmap glyphs, each pixel a ``scale`` x ``scale`` square, top left at ``xy``."""
    x0, y0 = xy
    for ch in text:
        for r, row in enumerate(_GLYPHS[ch]):
            for c, bit in enumerate(row):
                if bit == "1":
                    draw.rectangle([x0 + c * scale, y0 + r * scale, x0 + (c + 1) * scale - 1,
                                    y0 + (r + 1) * scale - 1], fill=fill)
        x0 += 6 * scale


def smooth_noise(size: tuple[int, int], cell: int, amp: float, seed: int) -> Image.Image:
    """Grey image centred on 128: seeded random values on a coarse grid, upscaled smoothly."""
    rng = random.Random(seed)
    w, h = max(2, size[0] // cell + 2), max(2, size[1] // cell + 2)
    data = bytes(max(0, min(255, int(round(128 + rng.uniform(-amp, amp))))) for _ in range(w * h))
    small = Image.frombytes("L", (w, h), data)
    return small.resize((w * cell, h * cell), Image.Resampling.BICUBIC).crop((0, 0, size[0], size[1]))


def add_signed(img: Image.Image, noise: Image.Image) -> Image.Image:
    """Add signed noise: img + (noise - 128), clipped, per band (noise is L, img is L or RGB)."""
    if img.mode == "RGB":
        noise = Image.merge("RGB", [noise] * 3)
    return ImageChops.add(img, noise, scale=1.0, offset=-128)


Point = tuple[float, float]


def quad(p0: Point, p1: Point, p2: Point, n: int = 40) -> list[tuple[float, float]]:
    """Points of a quadratic Bezier curve."""
    pts = []
    for i in range(n + 1):
        t = i / n
        x = (1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * p1[0] + t * t * p2[0]
        y = (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * p1[1] + t * t * p2[1]
        pts.append((x, y))
    return pts


def blob(cx: float, cy: float, r: float, wobble: float, seed: int, n: int = 48,
         sx: float = 1.0, sy: float = 1.0) -> list[tuple[float, float]]:
    """An irregular closed outline: radius r with seeded low-frequency wobble."""
    rng = random.Random(seed)
    harmonics = [(k, rng.uniform(-wobble, wobble), rng.uniform(0, 2 * math.pi)) for k in (2, 3, 4, 5)]
    pts = []
    for i in range(n):
        a = 2 * math.pi * i / n
        rr = r * (1 + sum(amp / k * math.sin(k * a + ph) for k, amp, ph in harmonics))
        pts.append((cx + rr * sx * math.cos(a), cy + rr * sy * math.sin(a)))
    return pts


def tint(base: Image.Image, colour: tuple[int, int, int], mask: Image.Image) -> Image.Image:
    """Blend ``colour`` over ``base`` where ``mask`` (L, 0..255) says how much."""
    return Image.composite(Image.new("RGB", base.size, colour), base, mask)


def png_bytes(img: Image.Image) -> bytes:
    """The image as PNG bytes, optimised and without metadata."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- chest X-ray

_R_LUNG = [(170, 92), (148, 102), (122, 128), (100, 170), (86, 220), (76, 280), (71, 340), (72, 392),
           (78, 412), (105, 398), (140, 382), (175, 374), (205, 372), (218, 360), (214, 320), (212, 280),
           (218, 240), (222, 190), (221, 140), (210, 106)]
_L_LUNG = [(342, 92), (364, 102), (390, 128), (412, 170), (426, 220), (436, 280), (441, 340), (440, 395),
           (434, 418), (410, 406), (388, 396), (370, 390), (368, 360), (358, 322), (338, 288), (314, 258),
           (302, 228), (296, 190), (293, 140), (302, 106)]
# the left lung after collapsing away from the chest wall (left pneumothorax): lateral border ~55 px and
# apex ~55 px in from the pleura; medial border (heart, aortic knob) unchanged
_L_COLLAPSED = [(370, 390), (382, 394), (386, 372), (386, 330), (380, 280), (370, 230), (356, 190),
                (336, 160), (316, 152), (300, 162)]
_L_COLLAPSED_MEDIAL = [(296, 190), (302, 228), (314, 258), (338, 288), (358, 322), (368, 360)]
_L_HILUM = (306, 248)
_R_HILUM = (212, 242)


def _vessels(draw: ImageDraw.ImageDraw, rng: random.Random, x: float, y: float, angle: float, length: float,
             width: float, value: float, depth: int) -> None:
    if depth == 0 or length < 6:
        return
    x2, y2 = x + length * math.cos(angle), y + length * math.sin(angle)
    draw.line([(x, y), (x2, y2)], fill=int(value), width=max(1, int(round(width))))
    for turn in (-1, 1):
        _vessels(draw, rng, x2, y2, angle + turn * rng.uniform(0.25, 0.55), length * rng.uniform(0.66, 0.8),
                 width * 0.72, value * 0.86, depth - 1)


def _lung_markings(size: tuple[int, int], hilum: Point, side: int, seed: int) -> Image.Image:
    """Branching vessel shadows fanning out from a hilum; side -1 = image left, +1 = image right."""
    layer = Image.new("L", size, 0)
    d = ImageDraw.Draw(layer)
    rng = random.Random(seed)
    base = math.pi if side < 0 else 0.0
    for k in range(9):
        spread = -1.25 + k * (2.5 / 8)  # from up-and-out to down-and-out
        angle = base - side * spread + rng.uniform(-0.08, 0.08)
        _vessels(d, rng, hilum[0], hilum[1], angle, rng.uniform(34, 44), 4.0, 46, 6)
    return layer.filter(ImageFilter.GaussianBlur(1.1))


def chest_xray(pneumothorax: bool) -> Image.Image:
    """The frontal chest X-ray drawing: normal, or with a left pneumothorax (module docstring)."""
    size = (512, 512)
    img = Image.new("L", size, 6)
    d = ImageDraw.Draw(img)
    # soft tissue of neck, shoulders, upper arms and trunk
    d.rounded_rectangle([38, 58, 474, 620], radius=90, fill=118)
    d.rectangle([206, 0, 306, 90], fill=118)
    d.rounded_rectangle([0, 70, 58, 520], radius=30, fill=104)
    d.rounded_rectangle([454, 70, 512, 520], radius=30, fill=104)
    # abdomen under the diaphragm is denser
    d.ellipse([40, 365, 472, 700], fill=150)
    # heart and mediastinum (drawn as the space between the lungs, made denser)
    d.polygon([(218, 120), (296, 120), (302, 228), (338, 288), (368, 360), (370, 400), (205, 400),
               (214, 320), (212, 240)], fill=168)
    img = img.filter(ImageFilter.GaussianBlur(6))

    lung_mask = Image.new("L", size, 0)
    md = ImageDraw.Draw(lung_mask)
    md.polygon(_R_LUNG, fill=255)
    md.polygon(_L_LUNG, fill=255)
    lung_mask = lung_mask.filter(ImageFilter.GaussianBlur(5))
    img = Image.composite(Image.new("L", size, 40), img, lung_mask)

    # which part of each lung is aerated lung (markings) and which is pleural air (no markings)
    aerated = Image.new("L", size, 0)
    ad = ImageDraw.Draw(aerated)
    ad.polygon(_R_LUNG, fill=255)
    if pneumothorax:
        collapsed = _L_COLLAPSED + _L_COLLAPSED_MEDIAL
        ad.polygon(collapsed, fill=255)
        air = Image.new("L", size, 0)
        ImageDraw.Draw(air).polygon(_L_LUNG, fill=255)
        air = ImageChops.subtract(air, aerated)
        img = Image.composite(Image.new("L", size, 16), img, air.filter(ImageFilter.GaussianBlur(1.5)))
    else:
        ad.polygon(_L_LUNG, fill=255)
    aerated = aerated.filter(ImageFilter.GaussianBlur(2))

    markings = ImageChops.add(_lung_markings(size, _R_HILUM, -1, seed=11), _lung_markings(size, _L_HILUM, 1, seed=12))
    img = ImageChops.add(img, ImageChops.multiply(markings, aerated))

    # hila
    hil = Image.new("L", size, 0)
    hd = ImageDraw.Draw(hil)
    hd.ellipse([196, 222, 228, 268], fill=40)
    hd.ellipse([292, 226, 322, 272], fill=40)
    img = ImageChops.add(img, hil.filter(ImageFilter.GaussianBlur(5)))

    # bones: spine, clavicles, posterior and anterior ribs (added on top, so seen through everything)
    bone = Image.new("L", size, 0)
    bd = ImageDraw.Draw(bone)
    for i in range(14):
        y = 20 + i * 30
        bd.rounded_rectangle([241, y, 271, y + 24], radius=5, fill=12)
    for side in (-1, 1):
        bd.line(quad((256 + side * 22, 98), (256 + side * 95, 70), (256 + side * 178, 78), 30), fill=60, width=13)
        for i in range(10):
            y = 104 + i * 29
            post = quad((256 + side * 20, y), (256 + side * 150, y - 30 + i), (256 + side * 186, y + 40 + i * 2), 40)
            bd.line(post, fill=34, width=9 + i // 4)
            if i > 6:
                continue
            ant = quad((256 + side * 186, y + 40 + i * 2), (256 + side * 140, y + 62 + i * 2),
                       (256 + side * 72, y + 96 + i * 2), 30)
            bd.line(ant, fill=14, width=8)
        # humeral heads
        bd.ellipse([256 + side * 232 - 34, 84, 256 + side * 232 + 34, 152], fill=50)
    img = ImageChops.add(img, bone.filter(ImageFilter.GaussianBlur(1.6)))

    if pneumothorax:  # the visceral pleural line: thin, white, along the collapsed lung's lateral/apical edge
        line = Image.new("L", size, 0)
        ld = ImageDraw.Draw(line)
        ld.line(_L_COLLAPSED, fill=110, width=2, joint="curve")
        img = ImageChops.add(img, line.filter(ImageFilter.GaussianBlur(0.6)))

    img = add_signed(img, smooth_noise(size, 3, 7, seed=21 if pneumothorax else 22))
    # side marker: patient's left is on the image right
    draw_text(ImageDraw.Draw(img), (452, 18), "L", 4, 235)
    return img


# ---------------------------------------------------------------------------------------------- forearm X-ray

def forearm_xray() -> Image.Image:
    """The AP forearm X-ray drawing with a transverse mid-shaft fracture of the radius (module docstring)."""
    w, h = 384, 512
    img = Image.new("L", (w, h), 8)
    d = ImageDraw.Draw(img)
    # soft tissue of forearm (wider at the elbow), hand at the top, thumb on the image left
    d.polygon([(120, 60), (268, 60), (282, 250), (300, 512), (86, 512), (104, 250)], fill=78)
    d.rounded_rectangle([110, 0, 280, 95], radius=40, fill=78)
    d.polygon([(118, 80), (86, 40), (62, 0), (104, 0), (140, 60)], fill=78)  # thumb
    img = img.filter(ImageFilter.GaussianBlur(8))

    bone = Image.new("L", (w, h), 0)
    bd = ImageDraw.Draw(bone)
    cortex, marrow = 150, 105

    def shaft(poly_outer: Sequence[Point], poly_inner: Sequence[Point]) -> None:
        bd.polygon(poly_outer, fill=cortex)
        bd.polygon(poly_inner, fill=marrow)

    # carpal bones and metacarpal bases
    for (cx, cy, rx, ry) in [(150, 92, 20, 16), (190, 88, 19, 17), (228, 94, 17, 15), (160, 58, 18, 15),
                             (200, 54, 18, 15), (238, 60, 15, 14)]:
        bd.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=135)
    for x in (160, 198, 234, 262):
        bd.rounded_rectangle([x - 9, 0, x + 9, 40], radius=6, fill=140)
    bd.line([(138, 70), (104, 14), (92, 0)], fill=140, width=20)  # first metacarpal (thumb)

    # ulna (image right): narrow distal head at the wrist, broad proximally (olecranon at the elbow)
    shaft([(226, 118), (250, 116), (252, 200), (256, 320), (266, 440), (286, 512), (214, 512), (226, 440),
           (230, 320), (228, 200)],
          [(233, 126), (244, 126), (246, 200), (249, 320), (256, 440), (266, 512), (232, 512), (236, 440),
           (237, 320), (235, 200)])
    bd.ellipse([222, 104, 254, 132], fill=cortex)  # ulnar head
    bd.ellipse([246, 100, 258, 118], fill=cortex)  # styloid

    # radius (image left): broad distal end at the wrist, narrow radial head at the elbow.
    # Transverse mid-shaft fracture at y = 262: the distal fragment (upper) is shifted laterally by 12 px.
    gap_top, gap_bottom, shift = 258, 266, -12
    distal = [(118, 112), (206, 112), (200, 150), (188, 190), (184, 230), (182, gap_top), (150, gap_top),
              (148, 230), (140, 190), (126, 150)]
    distal_in = [(136, 124), (192, 124), (184, 160), (176, 200), (174, 240), (172, gap_top), (160, gap_top),
                 (158, 240), (152, 200), (142, 160)]
    shaft([(x + (shift if y > 150 else shift * (y - 112) / 38), y) for x, y in distal],
          [(x + (shift if y > 150 else shift * (y - 112) / 38), y) for x, y in distal_in])
    proximal = [(150, gap_bottom), (182, gap_bottom), (181, 330), (180, 420), (182, 470), (150, 470),
                (154, 420), (152, 330)]
    proximal_in = [(160, gap_bottom), (172, gap_bottom), (171, 330), (170, 420), (168, 466), (162, 466),
                   (162, 420), (161, 330)]
    shaft(proximal, proximal_in)
    bd.rounded_rectangle([142, 462, 192, 486], radius=6, fill=cortex)  # radial head
    # distal humerus and capitellum/trochlea at the elbow
    bd.polygon([(120, 512), (130, 492), (196, 488), (222, 492), (300, 496), (310, 512)], fill=130)
    img = ImageChops.add(img, bone.filter(ImageFilter.GaussianBlur(1.3)))
    img = add_signed(img, smooth_noise((w, h), 3, 6, seed=31))
    return img


# ---------------------------------------------------------------------------------------------- ECG

PX_PER_MM = 4
_LEADS = ("II", "V2", "V3")
# per lead: P, Q, R, S, T amplitudes in mV
_MORPH = {"II": (0.15, -0.08, 1.3, -0.25, 0.35), "V2": (0.08, 0.0, 0.5, -1.2, 0.45),
          "V3": (0.08, 0.0, 0.9, -0.7, 0.45)}
# STEMI: ST shift (mV) and T amplitude (mV) per lead
_STEMI = {"II": (-0.1, 0.2), "V2": (0.4, 0.8), "V3": (0.4, 0.85)}


def _g(t: float, mu: float, sigma: float, a: float) -> float:
    return a * math.exp(-0.5 * ((t - mu) / sigma) ** 2)


def _smoothstep(a: float, b: float, t: float) -> float:
    x = min(1.0, max(0.0, (t - a) / (b - a)))
    return x * x * (3 - 2 * x)


def _beat(t: float, lead: str, stemi: bool) -> float:
    """The lead's voltage in mV at time t (s) relative to the R peak."""
    p, q, r, s, tw = _MORPH[lead]
    st = 0.0
    if stemi:
        st, tw = _STEMI[lead]
    v = _g(t, -0.16, 0.022, p) + _g(t, -0.028, 0.007, q) + _g(t, 0.0, 0.010, r) + _g(t, 0.03, 0.010, s)
    if stemi and st > 0:  # ST lifts from the J point and merges into a tall T
        v += st * _smoothstep(0.035, 0.07, t) * (1 - _smoothstep(0.26, 0.36, t)) + _g(t, 0.24, 0.06, tw - st)
    else:
        v += st * _smoothstep(0.035, 0.07, t) * (1 - _smoothstep(0.20, 0.30, t)) + _g(t, 0.28, 0.05, tw)
    return v


def ecg(stemi: bool) -> Image.Image:
    """The three-lead ECG strip: anterior STEMI or normal sinus rhythm (module docstring)."""
    w, band = 512, 132
    h = band * 3 + 4
    img = Image.new("RGB", (w, h), (255, 244, 244))
    d = ImageDraw.Draw(img)
    for x in range(0, w, PX_PER_MM):
        d.line([(x, 0), (x, h)], fill=(248, 205, 205) if x % (5 * PX_PER_MM) else (232, 140, 140))
    for y in range(0, h, PX_PER_MM):
        d.line([(0, y), (w, y)], fill=(248, 205, 205) if y % (5 * PX_PER_MM) else (232, 140, 140))
    for y in range(0, h, 5 * PX_PER_MM):  # redraw major lines over minor ones
        d.line([(0, y), (w, y)], fill=(232, 140, 140))
    for x in range(0, w, 5 * PX_PER_MM):
        d.line([(x, 0), (x, h)], fill=(232, 140, 140))

    rr = 60 / (95 if stemi else 72)
    mm_per_s, mm_per_mv = 25, 10
    ink = (20, 20, 28)
    for i, lead in enumerate(_LEADS):
        base = i * band + 84
        draw_text(d, (6, i * band + 8), lead, 2, ink)
        # 1 mV calibration pulse, 0.2 s wide
        x0 = 8
        cal = [(x0, base), (x0 + 4, base), (x0 + 4, base - 10 * PX_PER_MM), (x0 + 4 + 5 * PX_PER_MM,
               base - 10 * PX_PER_MM), (x0 + 4 + 5 * PX_PER_MM, base), (x0 + 8 + 5 * PX_PER_MM, base)]
        d.line(cal, fill=ink, width=2)
        start = x0 + 12 + 5 * PX_PER_MM
        pts = []
        for k in range((w - start) * 4):
            px = start + k / 4
            t = (px - start) / (mm_per_s * PX_PER_MM) + 0.35
            tb = (t + rr / 2) % rr - rr / 2  # time from the nearest R peak
            mv = _beat(tb, lead, stemi) + _beat(tb - rr, lead, stemi) + _beat(tb + rr, lead, stemi)
            pts.append((px, base - mv * mm_per_mv * PX_PER_MM))
        d.line(pts, fill=ink, width=2, joint="curve")
    return img


# ---------------------------------------------------------------------------------------------- skin photos

def _skin(size: tuple[int, int], seed: int, colour: tuple[int, int, int] = (222, 170, 138)) -> Image.Image:
    img = Image.new("RGB", size, colour)
    img = add_signed(img, smooth_noise(size, 48, 14, seed))
    img = add_signed(img, smooth_noise(size, 6, 5, seed + 1))
    return img


def erythema_migrans() -> Image.Image:
    """The skin photo of erythema migrans, a bull's-eye lesion (module docstring)."""
    size = (384, 384)
    img = _skin(size, seed=41)
    cx, cy = 196, 188
    outer = Image.new("L", size, 0)
    od = ImageDraw.Draw(outer)
    od.polygon(blob(cx, cy, 108, 0.10, seed=42, sx=1.06), fill=200)
    od.polygon(blob(cx, cy, 76, 0.08, seed=43, sx=1.06), fill=0)
    img = tint(img, (196, 62, 62), outer.filter(ImageFilter.GaussianBlur(7)))
    clear = Image.new("L", size, 0)
    ImageDraw.Draw(clear).polygon(blob(cx, cy, 70, 0.08, seed=43, sx=1.06), fill=50)
    img = tint(img, (236, 196, 170), clear.filter(ImageFilter.GaussianBlur(6)))
    centre = Image.new("L", size, 0)
    ImageDraw.Draw(centre).polygon(blob(cx, cy, 30, 0.12, seed=44), fill=210)
    img = tint(img, (186, 52, 56), centre.filter(ImageFilter.GaussianBlur(5)))
    dot = Image.new("L", size, 0)
    ImageDraw.Draw(dot).ellipse([cx - 3, cy - 3, cx + 3, cy + 3], fill=230)
    img = tint(img, (70, 30, 30), dot.filter(ImageFilter.GaussianBlur(1)))
    return img


def cellulitis() -> Image.Image:
    """The skin photo of spreading cellulitis past an earlier pen line (module docstring)."""
    size = (384, 384)
    img = _skin(size, seed=51, colour=(226, 178, 148))
    red = Image.new("L", size, 0)
    ImageDraw.Draw(red).polygon(blob(190, 170, 138, 0.22, seed=52, sx=0.95, sy=1.12), fill=190)
    img = tint(img, (206, 70, 62), red.filter(ImageFilter.GaussianBlur(22)))
    core = Image.new("L", size, 0)
    ImageDraw.Draw(core).polygon(blob(192, 210, 80, 0.2, seed=53), fill=120)
    img = tint(img, (190, 46, 46), core.filter(ImageFilter.GaussianBlur(20)))
    shine = Image.new("L", size, 0)
    ImageDraw.Draw(shine).ellipse([150, 190, 230, 236], fill=50)
    img = tint(img, (250, 220, 215), shine.filter(ImageFilter.GaussianBlur(14)))
    # the pen line drawn at an earlier review: lower and smaller than today's redness
    pen = blob(192, 226, 86, 0.12, seed=54, n=60, sx=1.05, sy=0.9)
    ImageDraw.Draw(img).line(pen + pen[:1], fill=(28, 30, 60), width=3, joint="curve")
    return img


def wound_heel() -> Image.Image:
    """The wound photo of a heel ulcer with necrotic eschar (module docstring)."""
    size = (384, 384)
    img = Image.new("RGB", size, (70, 120, 160))  # drape
    img = add_signed(img, smooth_noise(size, 24, 10, seed=61))
    heel_mask = Image.new("L", size, 0)
    ImageDraw.Draw(heel_mask).ellipse([46, 40, 346, 420], fill=255)
    skin = _skin(size, seed=62, colour=(214, 168, 140))
    img = Image.composite(skin, img, heel_mask.filter(ImageFilter.GaussianBlur(4)))
    cx, cy = 196, 222
    callus = Image.new("L", size, 0)
    ImageDraw.Draw(callus).polygon(blob(cx, cy, 96, 0.1, seed=63), fill=120)
    img = tint(img, (232, 214, 190), callus.filter(ImageFilter.GaussianBlur(10)))
    rim = Image.new("L", size, 0)
    ImageDraw.Draw(rim).polygon(blob(cx, cy, 76, 0.2, seed=64), fill=220)
    img = tint(img, (196, 72, 70), rim.filter(ImageFilter.GaussianBlur(7)))
    slough = Image.new("L", size, 0)
    ImageDraw.Draw(slough).polygon(blob(cx - 4, cy + 3, 64, 0.3, seed=65), fill=235)
    img = tint(img, (214, 190, 96), slough.filter(ImageFilter.GaussianBlur(3)))
    eschar = Image.new("L", size, 0)
    ImageDraw.Draw(eschar).polygon(blob(cx + 6, cy - 2, 52, 0.34, seed=66), fill=250)
    img = tint(img, (30, 24, 22), eschar.filter(ImageFilter.GaussianBlur(2)))
    img = add_signed(img, smooth_noise(size, 5, 6, seed=67))
    return img


# ---------------------------------------------------------------------------------------------- pipeline test

def three_lesions() -> Image.Image:
    """The pipeline test image: three dark round spots on a light background."""
    size = (256, 256)
    img = Image.new("L", size, 214)
    spots = Image.new("L", size, 0)
    sd = ImageDraw.Draw(spots)
    for (cx, cy, r) in [(70, 78, 20), (182, 96, 14), (120, 188, 26)]:
        sd.ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
    img = Image.composite(Image.new("L", size, 72), img, spots.filter(ImageFilter.GaussianBlur(1.5)))
    return img


# ---------------------------------------------------------------------------------------------- main

IMAGES = {
    "cxr_left_pneumothorax.png": lambda: chest_xray(pneumothorax=True),
    "cxr_normal.png": lambda: chest_xray(pneumothorax=False),
    "xr_forearm_radius_fracture.png": forearm_xray,
    "ecg_anterior_stemi.png": lambda: ecg(stemi=True),
    "ecg_normal_sinus.png": lambda: ecg(stemi=False),
    "skin_erythema_migrans.png": erythema_migrans,
    "skin_cellulitis_marked.png": cellulitis,
    "wound_heel_necrosis.png": wound_heel,
    "test_three_lesions.png": three_lesions,
}

MAX_BYTES = 150 * 1024


def main(argv: list[str]) -> int:
    """Draw every image and write it next to this script, or with ``--check`` compare it with the file.

    Returns:
        1 if an image is over ``MAX_BYTES`` or (with ``--check``) differs from its file, else 0.
    """
    check = "--check" in argv
    bad = 0
    for name, make in IMAGES.items():
        data = png_bytes(make())
        if len(data) > MAX_BYTES:
            print(f"{name}: {len(data)} bytes, over the {MAX_BYTES} byte limit", file=sys.stderr)
            bad += 1
        path = HERE / name
        if check:
            if not path.exists() or path.read_bytes() != data:
                print(f"{name}: differs from a fresh drawing (run without --check to rewrite)", file=sys.stderr)
                bad += 1
        else:
            path.write_bytes(data)
            print(f"{name}: {len(data)} bytes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
