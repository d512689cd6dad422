"""Generate the bundled sample collection: the (fictional) Northwind Labs employee handbook.

All text below is original and invented for Shelfwise. Northwind Labs, its people, products, tools, addresses
and phone numbers are fictional (phone numbers use the 555 range, mail addresses the ``.example`` domain).

Usage::

    .venv/bin/python scripts/make_sample.py          # resources/sample/* and resources/sample_questions.jsonl
    .venv/bin/python scripts/make_sample.py --icons  # also renders resources/icons/shelfwise.png from the SVG

The collection is split across formats (PDF, DOCX, PPTX, XLSX, Markdown, plain text) so that every parser is
exercised. After writing, the script reads the files back with the same libraries and asserts that every gold
question's evidence really is at the stated location, that the PDF outline points at the right pages, etc.
Output is deterministic: fixed metadata dates, and Office zip members are rewritten with a fixed timestamp.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "resources" / "sample"
QUESTIONS_PATH = ROOT / "resources" / "sample_questions.jsonl"
ICON_SVG = ROOT / "resources" / "icons" / "shelfwise.svg"
ICON_PNG = ROOT / "resources" / "icons" / "shelfwise.png"

FIXED_DATETIME = dt.datetime(2026, 1, 5, 9, 0, 0)
ZIP_DATE_TIME = (2026, 1, 5, 9, 0, 0)
COMPANY = "Northwind Labs"

# ------------------------------------------------------------------------------------------------------------
# handbook.pdf
# ------------------------------------------------------------------------------------------------------------

HANDBOOK_TITLE = "Northwind Labs Employee Handbook"

# One list per page. Blocks: ("h1", text) and ("h2", text) become outline entries; ("p", text),
# ("ul", [items]).
HANDBOOK_PAGES: list[list[tuple[str, Any]]] = [
    # page 1 - cover
    [
        ("cover", HANDBOOK_TITLE),
        ("p", "Edition 2026, version 3.2. Effective from 1 January 2026."),
        ("p", "Owner: People Team, Northwind Labs, Lantern Quay 14, Rotterdam."),
        (
            "p",
            "This handbook describes how we work together at Northwind Labs: working hours, leave, remote "
            "work and the code of conduct. Travel, IT security, pay and benefits, and our buildings are "
            "covered in separate documents in the same collection.",
        ),
        ("p", "Questions about this handbook go to people@northwindlabs.example or extension 2100."),
    ],
    # page 2
    [
        ("h1", "1 Welcome"),
        ("h2", "1.1 About Northwind Labs"),
        (
            "p",
            "Northwind Labs designs weather-sensing hardware and the forecasting software that runs on it. "
            "The company was founded in 2014 by Ilse Varga and Tomas Brandt in a converted boat shed on "
            "Lantern Quay in Rotterdam, and today employs 214 people across two offices: the Rotterdam "
            "headquarters and the Lisbon engineering studio. Our flagship product, the Skylark station, is "
            "installed at more than 3,000 farms, harbours and airfields.",
        ),
        (
            "p",
            "This handbook applies to every employee on a Northwind Labs contract. Contractors and interns "
            "follow the sections that their agreements refer to. Where this handbook and your employment "
            "contract differ, your contract wins.",
        ),
        ("h2", "1.2 Our values"),
        (
            "p",
            "We work by three values. Measure twice: we check our assumptions with data before we act. Share "
            "the weather: we tell colleagues early when something goes wrong, because bad news does not "
            "improve with age. Leave the quay cleaner: we leave code, documents and shared spaces in better "
            "shape than we found them.",
        ),
        ("h2", "1.3 Probation period"),
        (
            "p",
            "Every new employee starts with a probation period of three months. Halfway through, at the "
            "six-week check-in, you and your manager review the goals set in your first week. At the end of "
            "probation your manager confirms your employment in writing or, in exceptional cases, extends "
            "the probation once by up to one month. During probation either side may end the employment with "
            "one week of notice.",
        ),
        ("h2", "1.4 Keeping this handbook current"),
        (
            "p",
            "The People Team reviews this handbook every January. Changes are announced in the "
            "#announcements channel and take effect on the first day of the following month. The version "
            "number on the cover tells you which edition you are reading.",
        ),
    ],
    # page 3
    [
        ("h1", "2 Working Hours"),
        ("h2", "2.1 Core hours"),
        (
            "p",
            "A full-time working week at Northwind Labs is 38 hours. Core hours are 10:00 to 15:00, Monday "
            "to Friday, and all employees are expected to be available for meetings during those hours. "
            "Outside core hours you choose when to start and finish, within the daily working window of "
            "07:00 to 20:00. Part-time employees agree their own core hours with their manager and record "
            "them in the HR system.",
        ),
        (
            "p",
            "Meetings with more than three participants should not be scheduled before 10:00 or after 15:00. "
            "Friday afternoons after 13:00 are kept free of internal meetings so that people can focus on "
            "deep work.",
        ),
        ("h2", "2.2 Flexitime"),
        (
            "p",
            "Hours worked above or below your contracted hours build up a flexitime balance, which you "
            "record weekly in the Timekeeper app. The balance may range from minus 10 hours to plus 20 "
            "hours. Hours above the plus 20 hour cap at the end of a month are forfeited unless your manager "
            "has approved them as overtime. A negative balance must be brought back to zero within two "
            "months.",
        ),
        (
            "p",
            "You may use a positive balance to take a flexi day, a full day off, up to once per calendar "
            "month. Flexi days follow the same approval process as annual leave but may be requested with "
            "only two working days of notice.",
        ),
    ],
    # page 4
    [
        ("h2", "2.3 Overtime"),
        (
            "p",
            "Overtime is work above 38 hours in a week that your manager asked for or approved in advance. "
            "Approval is requested with the Overtime Request form OT-2 in the HR system before the extra "
            "hours are worked. Retrospective approval is only possible for on-call incidents. No one may "
            "work more than 10 overtime hours in a single week, or more than 48 hours in total.",
        ),
        (
            "p",
            "Approved overtime is compensated as time off in lieu at a rate of 1.5 hours for every hour "
            "worked. Overtime on Sundays and public holidays is compensated at a rate of 2 hours for every "
            "hour worked. Employees in salary band L6 and above do not receive overtime compensation, "
            "because their salary already reflects occasional extra hours.",
        ),
        (
            "p",
            "Engineers on the on-call rota receive an on-call allowance of EUR 45 for each weekday night and "
            "EUR 90 for each weekend day they are on call, on top of any overtime for incidents they work "
            "on.",
        ),
        ("h2", "2.4 Breaks and rest"),
        (
            "p",
            "If you work more than six hours in a day, you must take a lunch break of at least 30 minutes, "
            "which is unpaid. In addition, everyone is entitled to two paid breaks of 10 minutes per day. "
            "Between two working days there must be a rest period of at least 11 hours, and each week must "
            "include one uninterrupted rest period of at least 36 hours.",
        ),
        (
            "p",
            "If an incident forces you to break these rest rules, tell your manager on the next working day "
            "so that the rota can be adjusted.",
        ),
    ],
    # page 5
    [
        ("h1", "3 Leave"),
        ("h2", "3.1 Annual leave"),
        (
            "p",
            "Full-time employees receive 27 days of paid annual leave per calendar year. After five years of "
            "continuous service, you receive one additional day for every further full year of service, up "
            "to a maximum of 30 days. Part-time employees receive leave in proportion to their contracted "
            "hours. Employees who join or leave during the year receive a pro-rata entitlement, rounded up "
            "to the nearest half day.",
        ),
        (
            "p",
            "Up to five unused days may be carried over into the next calendar year. Carried-over days must "
            "be taken by 31 March, after which they expire. Days above the carry-over limit expire on 31 "
            "December unless the People Team has agreed an exception in writing, for example after a long "
            "illness.",
        ),
        ("h2", "3.2 Requesting leave"),
        (
            "p",
            "All leave is requested in the LeaveDesk portal. For a leave period of three or more consecutive "
            "working days, submit the request at least 10 working days in advance. Shorter absences need at "
            "least two working days of notice. Your manager responds within three working days; a request "
            "that receives no response in that time is approved automatically.",
        ),
        (
            "p",
            "Between 15 July and 31 August, no more than one third of a team may be on leave at the same "
            "time. The offices close for the company shutdown from 29 to 31 December, and three days of "
            "annual leave are reserved for the shutdown.",
        ),
    ],
    # page 6
    [
        ("h2", "3.3 Sick leave"),
        (
            "p",
            "If you are ill and cannot work, notify your manager by phone or chat before 09:30 on your first "
            "day of absence, and register the absence in LeaveDesk the same day. Email alone is not enough. "
            "Tell us how long you expect to be away, but do not share medical details unless you want to.",
        ),
        (
            "p",
            "A medical certificate is required from the fourth consecutive calendar day of absence. For "
            "absences longer than two weeks, our occupational health service, Harbour Health, will contact "
            "you to agree a return-to-work plan. During illness you receive 100 percent of your salary for "
            "the first 26 weeks and 70 percent for the following 78 weeks.",
        ),
        (
            "p",
            "When you recover, report back to your manager and close the absence in LeaveDesk on your first "
            "working day. If you fall ill during annual leave, contact your manager on the first day of "
            "illness; the days for which you are certified as ill are returned to your leave balance.",
        ),
        ("h2", "3.4 Care leave"),
        (
            "p",
            "You may take up to 10 days of short-term care leave per calendar year to look after a sick "
            "partner, child or parent, paid at 100 percent of your salary. Long-term care leave of up to six "
            "weeks per year is unpaid, but the company keeps paying its pension contributions during it.",
        ),
    ],
    # page 7
    [
        ("h2", "3.5 Parental leave"),
        (
            "p",
            "The birth parent receives 20 weeks of fully paid parental leave. The non-birth parent, "
            "including an adoptive or foster parent, receives 8 weeks of fully paid parental leave, which "
            "must be taken within 12 months of the birth or adoption. Both may be taken in one block or in "
            "up to three separate blocks.",
        ),
        (
            "p",
            "Tell the People Team at least 15 weeks before the expected date of birth or placement, so that "
            "we can plan cover. During parental leave you may work up to 10 Keeping-in-Touch days, paid at "
            "your normal rate, without ending your leave. After returning, you may work reduced hours for up "
            "to six months in the same role and salary band.",
        ),
        ("h2", "3.6 Other paid leave"),
        ("p", "Paid leave is also available in the following situations:"),
        (
            "ul",
            [
                "Bereavement: 5 days for the death of a partner, child, parent or sibling, and 2 days for "
                "other relatives.",
                "Moving house: 1 day per calendar year.",
                "Your own wedding or registered partnership: 2 days.",
                "Jury service or a court summons as a witness: the full time needed, at full pay.",
                "Community Days: 2 days per calendar year for volunteering with a registered charity.",
            ],
        ),
        (
            "p",
            "Request these types of leave in LeaveDesk under Special leave, with the reason in the comment "
            "field.",
        ),
    ],
    # page 8
    [
        ("h1", "4 Remote Work"),
        ("h2", "4.1 Eligibility"),
        (
            "p",
            "Employees may work remotely once they have completed their three-month probation period. Roles "
            "that require hands-on work in the hardware lab, such as assembly technicians and test "
            "engineers, are eligible for one remote day per week only. A manager may pause remote work for a "
            "team member whose performance plan requires closer support, after discussing it with the People "
            "Team.",
        ),
        ("h2", "4.2 Hybrid schedule"),
        (
            "p",
            "The standard arrangement is hybrid: you work from the office at least two days per week. "
            "Tuesday and Thursday are anchor days, on which every team in Rotterdam and Lisbon meets in "
            "person. On other days you choose where to work. Register the days you plan to be in the office "
            "in the Deskbook app by Friday of the previous week, so that desks and lunch can be planned.",
        ),
        ("h2", "4.3 Home office allowance"),
        (
            "p",
            "When you start working remotely, you receive a one-time home office allowance of EUR 600 for a "
            "desk, chair, screen or other equipment. In addition, the company pays a monthly internet and "
            "utilities stipend of EUR 25 with your salary. The one-time allowance becomes available again "
            "after four years.",
        ),
        (
            "p",
            "Equipment bought with the allowance belongs to you, but laptops, docking stations and headsets "
            "issued by IT remain company property and must be returned when you leave.",
        ),
    ],
    # page 9
    [
        ("h2", "4.4 Working from abroad"),
        (
            "p",
            "You may work from another country for up to 20 working days per calendar year. Submit the Work "
            "From Abroad form WFA-1 in the HR system at least four weeks before you travel, so that the "
            "legal and tax team can check the destination. Working from abroad is not permitted from "
            "countries on the company restricted list, and it cannot be combined with on-call duty.",
        ),
        ("h2", "4.5 Security at home"),
        (
            "p",
            "The IT security rules apply in full when you work from home. Lock your screen whenever you step "
            "away, keep work documents off shared family computers, and never print confidential documents "
            "at home. Hold video calls about confidential matters with headphones and away from shared "
            "spaces. The IT Security Onboarding slides give the full rules on VPN use and laptop encryption.",
        ),
        ("h2", "4.6 Fully remote contracts"),
        (
            "p",
            "Fully remote contracts are an exception and must be approved by a director. Either side can end "
            "a fully remote arrangement with two months of notice, after which the standard hybrid schedule "
            "applies. Fully remote employees are expected in the office for the company summit, which takes "
            "place every September in Rotterdam; the company pays the travel.",
        ),
    ],
    # page 10
    [
        ("h1", "5 Code of Conduct"),
        ("h2", "5.1 Respect at work"),
        (
            "p",
            "Northwind Labs does not tolerate harassment, discrimination or bullying, whether in the office, "
            "at company events, in chat channels or on customer sites. Treat colleagues, customers and "
            "suppliers with courtesy, even when you disagree with them. Jokes or comments about a person's "
            "gender, ethnicity, religion, age, disability or sexual orientation are never acceptable.",
        ),
        ("h2", "5.2 Conflicts of interest"),
        (
            "p",
            "A conflict of interest exists when a personal interest could influence, or appear to influence, "
            "a decision you make for the company. Examples are a financial stake in a supplier, a close "
            "relative applying for a job in your team, or a second job with a competitor. Declare any "
            "conflict of interest to your manager as soon as it arises. The annual declaration of interests "
            "is due by 31 January.",
        ),
        (
            "p",
            "Side jobs are allowed if they do not compete with Northwind Labs and take no more than 8 hours "
            "per week. Tell your manager before you start one.",
        ),
        ("h2", "5.3 Gifts and hospitality"),
        (
            "p",
            "You may accept gifts or hospitality with a value of up to EUR 50 per occasion. Gifts above this "
            "value must be declared in the Gifts Register within five working days, and your manager decides "
            "whether you may keep them. Cash, vouchers and gifts offered during a tender are never accepted, "
            "whatever their value.",
        ),
    ],
    # page 11
    [
        ("h2", "5.4 Speaking up"),
        (
            "p",
            "If you see behaviour that breaks this code, raise it with your manager, the People Team or the "
            "Ethics Officer, Marta Ilves. You can also report concerns anonymously through the Speak-Up "
            "Line, which is run by an independent provider and is available 24 hours a day at +31 10 555 "
            "0142. Reports are acknowledged within 7 days, and the person reporting receives feedback on the "
            "outcome within 3 months.",
        ),
        (
            "p",
            "Northwind Labs will not tolerate retaliation against anyone who raises a concern in good faith.",
        ),
        ("h2", "5.5 Disciplinary procedure"),
        (
            "p",
            "Breaches of this handbook are handled in three steps: an informal conversation, a written "
            "warning and a final written warning. Each written warning stays on file for 12 months. Serious "
            "misconduct, such as theft, violence or a deliberate data leak, may lead to dismissal without "
            "prior warnings. You may bring a colleague or a works council member to any disciplinary "
            "meeting.",
        ),
        ("h2", "5.6 Contacts"),
        (
            "ul",
            [
                "People Team: people@northwindlabs.example, extension 2100.",
                "Ethics Officer: Marta Ilves, ethics@northwindlabs.example.",
                "Speak-Up Line (anonymous, 24 hours): +31 10 555 0142.",
                "Security Desk (IT incidents): extension 4400.",
            ],
        ),
    ],
]

# Layout of the handbook. Text is set with the base-14 Helvetica fonts via ``insert_textbox`` rather than
# ``insert_htmlbox``: MuPDF's HTML engine shapes text with ligatures ("fi", "ffi"), which would put U+FB01
# etc. into the extracted text of our own sample.
PAGE_W, PAGE_H = 595, 842  # A4 in points
MARGIN_X, TOP, BOTTOM = 64, 64, 842 - 72
TEAL = (0.12, 0.31, 0.37)
GREY = (0.45, 0.45, 0.45)
BODY = (0.13, 0.13, 0.13)
# kind -> (font, size, space before, space after, colour)
PDF_STYLES: dict[str, tuple[str, float, float, float, tuple[float, float, float]]] = {
    "cover": ("hebo", 30, 150, 24, TEAL),
    "h1": ("hebo", 20, 0, 10, TEAL),
    "h2": ("hebo", 14, 10, 5, TEAL),
    "p": ("helv", 11, 0, 8, BODY),
    "li": ("helv", 11, 0, 4, BODY),
}
LINE_HEIGHT = 1.35


def _layout_page(page: Any, blocks: list[tuple[str, Any]], pno: int) -> None:
    import pymupdf

    y = TOP
    for index, (kind, value) in enumerate(blocks):
        items = value if kind == "ul" else [value]
        for item in items:
            style = "li" if kind == "ul" else kind
            font, size, before, after, color = PDF_STYLES[style]
            if index > 0 or style == "cover":
                y += before
            indent = 16 if style == "li" else 0
            rect = pymupdf.Rect(MARGIN_X + indent, y, PAGE_W - MARGIN_X, BOTTOM)
            spare = page.insert_textbox(
                rect, item, fontsize=size, fontname=font, color=color, lineheight=LINE_HEIGHT
            )
            if spare < 0:
                raise RuntimeError(f"handbook page {pno} overflows; move a block to the next page")
            if style == "li":  # a drawn bullet, so the extracted text stays clean
                page.draw_circle((MARGIN_X + 5, y + size * 0.62), 1.8, color=BODY, fill=BODY)
            y += rect.height - spare + after
        if kind == "ul":
            y += 4


def handbook_toc() -> list[list[Any]]:
    toc: list[list[Any]] = []
    for pno, blocks in enumerate(HANDBOOK_PAGES, start=1):
        for kind, value in blocks:
            if kind == "h1":
                toc.append([1, value, pno])
            elif kind == "h2":
                toc.append([2, value, pno])
    return toc


def build_pdf(path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    total = len(HANDBOOK_PAGES)
    for pno, blocks in enumerate(HANDBOOK_PAGES, start=1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        _layout_page(page, blocks, pno)
        if pno > 1:  # running footer, small and grey, as real handbooks have
            footer = f"{HANDBOOK_TITLE} - Edition 2026"
            page.insert_text((MARGIN_X, PAGE_H - 34), footer, fontsize=8, fontname="helv", color=GREY)
            label = f"Page {pno} of {total}"
            width = pymupdf.get_text_length(label, fontname="helv", fontsize=8)
            page.insert_text(
                (PAGE_W - MARGIN_X - width, PAGE_H - 34), label, fontsize=8, fontname="helv", color=GREY
            )
    doc.set_toc(handbook_toc())
    stamp = "D:20260105090000+01'00'"
    doc.set_metadata(
        {
            "title": HANDBOOK_TITLE,
            "author": "Northwind Labs People Team",
            "subject": "Working hours, leave, remote work and code of conduct",
            "keywords": "handbook, leave, working hours, remote work, code of conduct",
            "creator": "Shelfwise scripts/make_sample.py",
            "producer": "PyMuPDF",
            "creationDate": stamp,
            "modDate": stamp,
        }
    )
    doc.save(path, garbage=4, deflate=True, no_new_id=True)
    doc.close()


# ------------------------------------------------------------------------------------------------------------
# travel-and-expenses.docx
# ------------------------------------------------------------------------------------------------------------

PER_DIEM_ROWS = [
    ("Rotterdam", "Netherlands", "EUR 45", "EUR 140"),
    ("Amsterdam", "Netherlands", "EUR 55", "EUR 190"),
    ("Lisbon", "Portugal", "EUR 50", "EUR 150"),
    ("Berlin", "Germany", "EUR 55", "EUR 160"),
    ("London", "United Kingdom", "EUR 75", "EUR 230"),
    ("New York", "United States", "EUR 90", "EUR 290"),
    ("Singapore", "Singapore", "EUR 70", "EUR 240"),
]
PER_DIEM_OTHER = ("All other cities", "EUR 50", "EUR 150")

# (kind, text): "title", "h1", "h2", "h3", "p", "bullets" (list), "table"
DOCX_BLOCKS: list[tuple[str, Any]] = [
    ("title", "Travel and Expenses Policy"),
    ("p", "Version 2.1, effective 1 February 2026. Owner: Finance Team (finance@northwindlabs.example)."),
    ("h1", "Purpose and scope"),
    (
        "p",
        "This policy explains how to book business travel at Northwind Labs and how to claim back costs that "
        "you pay yourself. It applies to all employees and to contractors whose agreement refers to it. "
        "Commuting between your home and your usual office is not business travel and is not covered by this "
        "policy.",
    ),
    ("h1", "Booking travel"),
    ("h2", "Approval"),
    (
        "p",
        "Every business trip must be approved by your manager in the Voyager travel tool before anything is "
        "booked. Book at least 14 days before departure for trips within Europe and at least 21 days before "
        "departure for trips outside Europe. Trips outside Europe also need approval from a director.",
    ),
    ("h2", "Flights"),
    (
        "p",
        "Book economy class for flights shorter than 6 hours. Premium economy is allowed for flights of 6 "
        "hours or more. Business class is only allowed with written approval from the Chief Financial "
        "Officer. Checked luggage is covered for trips of three nights or longer, or when you carry test "
        "equipment.",
    ),
    ("h2", "Trains"),
    (
        "p",
        "Take the train instead of flying when the train journey takes less than 5 hours. First class is "
        "allowed for train journeys longer than 3 hours. Seat reservations are always reimbursed.",
    ),
    ("h2", "Hotels"),
    (
        "p",
        "Book hotels through Voyager, within the hotel cap for the city in the per diem table. Holiday "
        "rentals are allowed only for stays of 5 nights or more. If a conference hotel costs more than the "
        "cap, your manager may approve the difference in advance.",
    ),
    ("h1", "Per diems and meals"),
    (
        "p",
        "The daily allowance (per diem) covers meals, local transport and small incidental costs. It is paid "
        "for each calendar day away from home; the day you leave and the day you return are paid at 75 "
        "percent. Daily allowances and hotel caps depend on the city:",
    ),
    ("table", None),
    ("h2", "Meals"),
    (
        "p",
        "If a meal is provided free of charge, for example by a customer or at a conference, reduce the per "
        "diem for that day by 20 percent for breakfast and by 35 percent each for lunch and dinner. Alcohol "
        "is not reimbursed, except at a customer dinner approved in advance.",
    ),
    ("h3", "Customer entertainment"),
    (
        "p",
        "Customer dinners must be approved by your manager in advance and are limited to EUR 85 per person, "
        "including drinks. List the names and companies of all guests in the expense claim. Team meals paid "
        "by the company are limited to EUR 40 per person.",
    ),
    ("h1", "Claiming expenses"),
    ("h2", "Submitting claims"),
    (
        "p",
        "Submit expense claims in the Ledgerly app within 30 days of returning from your trip. Claims "
        "submitted more than 90 days after the expense are not reimbursed. A receipt is required for every "
        "expense above EUR 25; photograph the receipt in Ledgerly. Claims approved by the 15th of the month "
        "are paid with that month's salary.",
    ),
    ("h3", "Lost receipts"),
    (
        "p",
        "If you lose a receipt, complete a Missing Receipt Declaration in Ledgerly. You may use this "
        "declaration at most twice per calendar year, and only for amounts up to EUR 150.",
    ),
    ("h2", "Mileage"),
    (
        "p",
        "Business trips in your own car are reimbursed at EUR 0.30 per kilometre, plus parking and tolls. "
        "For trips longer than 300 kilometres in one day, book a company pool car instead.",
    ),
    ("h2", "Non-reimbursable items"),
    ("p", "The following costs are never reimbursed:"),
    (
        "bullets",
        [
            "Minibar and room-service charges beyond the per diem.",
            "Traffic fines and parking fines.",
            "Upgrades of flights, trains or rooms that were not approved in advance.",
            "Personal travel insurance, because the company travel policy already covers you.",
            "Travel or meals for partners and family members.",
        ],
    ),
    ("h1", "Corporate card"),
    (
        "p",
        "Employees who travel at least twice per quarter may request a Northwind corporate card from the "
        "Finance Team. Use it only for business expenses. Card statements must be reconciled in Ledgerly by "
        "the 5th of the following month; a card that is not reconciled for two months in a row is suspended.",
    ),
    (
        "p",
        "Report a lost or stolen card to the card provider immediately and to finance@northwindlabs.example "
        "within 24 hours.",
    ),
    ("h1", "Travel safety"),
    (
        "p",
        "Register every international trip in Voyager so that the company can reach you in an emergency. The "
        "24-hour travel assistance line is +31 10 555 0199. Travel to destinations with a red travel advice "
        "requires written approval from the Chief Operating Officer.",
    ),
]


def build_docx(path: Path) -> None:
    import docx
    from docx.shared import Pt

    document = docx.Document()
    for kind, value in DOCX_BLOCKS:
        if kind == "title":
            document.add_heading(value, level=0)  # "Title" style
        elif kind in ("h1", "h2", "h3"):
            document.add_heading(value, level=int(kind[1]))
        elif kind == "p":
            document.add_paragraph(value)
        elif kind == "bullets":
            for item in value:
                document.add_paragraph(item, style="List Bullet")
        elif kind == "table":
            header = ("City", "Country", "Daily allowance", "Hotel cap per night")
            table = document.add_table(rows=1 + len(PER_DIEM_ROWS) + 1, cols=4)
            table.style = "Table Grid"
            for i, text in enumerate(header):
                cell = table.rows[0].cells[i]
                cell.text = text
                for run in cell.paragraphs[0].runs:
                    run.bold = True
            for r, row in enumerate(PER_DIEM_ROWS, start=1):
                for c, text in enumerate(row):
                    table.rows[r].cells[c].text = text
            last = table.rows[-1]
            # the one merged cell: "All other cities" spans the City and Country columns
            merged = last.cells[0].merge(last.cells[1])
            merged.text = PER_DIEM_OTHER[0]
            last.cells[2].text = PER_DIEM_OTHER[1]
            last.cells[3].text = PER_DIEM_OTHER[2]
        else:  # pragma: no cover
            raise ValueError(kind)
    document.styles["Normal"].font.size = Pt(11)
    props = document.core_properties
    props.title = "Travel and Expenses Policy"
    props.author = "Northwind Labs Finance Team"
    props.last_modified_by = "Northwind Labs Finance Team"
    props.comments = "Shelfwise sample document. All content is fictional."
    props.subject = "Business travel, per diems and expense claims"
    props.keywords = "travel, expenses, per diem, hotel, mileage"
    props.created = FIXED_DATETIME
    props.modified = FIXED_DATETIME
    props.revision = 3
    document.save(path)


# ------------------------------------------------------------------------------------------------------------
# it-security-onboarding.pptx
# ------------------------------------------------------------------------------------------------------------

# (title, bullets or None, notes or None); a bullet given as ("text", 1) is indented one level.
SLIDES: list[dict[str, Any]] = [
    {
        "layout": "title",
        "title": "IT Security Onboarding",
        "subtitle": "Northwind Labs - your first week - presented by the Security Team",
        "notes": "Welcome the new starters. The session takes 45 minutes, with questions at the end.",
    },
    {
        "title": "Passwords and passphrases",
        "bullets": [
            "Use a passphrase of at least 14 characters for your Northwind account",
            "Store every work password in the Vaultkeeper password manager",
            ("The Vaultkeeper master passphrase needs at least 18 characters and is never written down", 1),
            "Never reuse a work password on any other site",
            "Passwords are changed when there is a sign of compromise, not on a schedule",
        ],
        "notes": "Explain why we dropped the 90-day password rotation rule in 2024: forced rotation led "
        "people to choose weaker passwords. Demonstrate the Vaultkeeper browser extension.",
    },
    {
        "title": "Multi-factor authentication (MFA)",
        "bullets": [
            "MFA is mandatory for email, chat, code hosting and the HR system",
            "Enrol the Northwind Verify app within your first 2 working days",
            "Engineers with production access also receive a hardware security key",
            "Lost your phone or key? Report it to the Security Desk within 1 hour",
            "Never approve an MFA prompt that you did not start yourself",
        ],
        "notes": "Repeated MFA prompts that you did not start mean your password is probably known to "
        "someone else: change it and call the Security Desk.",
    },
    {
        "title": "Laptop encryption and care",
        "bullets": [
            "Every laptop uses full-disk encryption, switched on by IT before hand-over",
            "The recovery key is held by IT; never store it on the laptop itself",
            "Screens lock automatically after 5 minutes of inactivity",
            "Install updates within 7 days; laptops restart automatically after 14 days",
            "Never leave a laptop unattended in a car, not even in the boot",
        ],
    },
    {
        "title": "Spotting and reporting phishing",
        "bullets": [
            "Check the sender address, the links and any sense of urgency before you act",
            "Report suspicious email with the Report Phish button in the mail client",
            "No button? Forward the message to phish@northwindlabs.example",
            "Clicked a link or typed a password? Call the Security Desk at once",
            "Monthly phishing simulations are practice, never a reason for blame",
        ],
        "notes": "Teams whose click rate in the simulations stays below 5 percent for a whole quarter earn "
        "the Clear Skies badge.",
    },
    {
        "title": "VPN: NorthGate",
        "bullets": [
            "NorthGate VPN is required on every public or hotel Wi-Fi network",
            "The wiki, build servers and HR system are only reachable through NorthGate",
            "Sessions disconnect after 12 hours; reconnect with MFA",
            "Do not use personal VPN services on a company laptop",
            "In the office, the NW-Staff Wi-Fi network does not need the VPN",
        ],
        "notes": "NorthGate connects automatically on untrusted networks. If it fails, first check whether "
        "the hotel Wi-Fi shows a login page.",
    },
    {
        "layout": "table",
        "title": "Data classification",
        "table": [
            ("Level", "Examples", "Handling"),
            ("Public", "Product brochures, published blog posts", "No restrictions"),
            (
                "Internal",
                "Wiki pages, team plans, the employee handbook",
                "Share only with staff and contractors",
            ),
            (
                "Confidential",
                "Customer contracts, salary data, source code",
                "Named people only; encrypt before sending outside the company",
            ),
            (
                "Restricted",
                "Station access credentials, signing keys",
                "Need-to-know only; never in email or chat",
            ),
        ],
        "notes": "When in doubt, label the document Confidential and ask its owner.",
    },
    {
        "title": "Reporting a security incident",
        "bullets": [
            "Security Desk: extension 4400 or +31 10 555 0144, 24 hours a day",
            "Email: security@northwindlabs.example",
            "Report lost or stolen devices within 1 hour of noticing",
            "Do not investigate or clean up on your own",
            "Early reports are never punished",
        ],
    },
    {
        "title": "Your first-week checklist",
        "bullets": [
            "Enrol Northwind Verify for MFA on day 1 or 2",
            "Install Vaultkeeper and move your work passwords into it",
            "Test the NorthGate VPN from outside the office",
            "Complete the Security Basics e-learning within 14 days",
            "Sign the Acceptable Use Policy in the HR system",
        ],
        "notes": "The e-learning takes about 40 minutes. Access to production systems is granted only after "
        "it is completed.",
    },
]


def build_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    for spec in SLIDES:
        layout = spec.get("layout", "content")
        if layout == "title":
            slide = prs.slides.add_slide(prs.slide_layouts[0])
            slide.shapes.title.text = spec["title"]
            slide.placeholders[1].text = spec["subtitle"]
        elif layout == "table":
            slide = prs.slides.add_slide(prs.slide_layouts[5])  # Title Only
            slide.shapes.title.text = spec["title"]
            rows = spec["table"]
            left, top, width, height = Inches(0.5), Inches(1.8), Inches(9), Inches(4)
            shape = slide.shapes.add_table(len(rows), len(rows[0]), left, top, width, height)
            table = shape.table
            table.columns[0].width = Inches(1.8)
            table.columns[1].width = Inches(3.6)
            table.columns[2].width = Inches(3.6)
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = text
                    for para in cell.text_frame.paragraphs:
                        for run in para.runs:
                            run.font.size = Pt(14)
        else:
            slide = prs.slides.add_slide(prs.slide_layouts[1])  # Title and Content
            slide.shapes.title.text = spec["title"]
            frame = slide.placeholders[1].text_frame
            for i, bullet in enumerate(spec["bullets"]):
                text, level = bullet if isinstance(bullet, tuple) else (bullet, 0)
                para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
                para.text = text
                para.level = level
                para.font.size = Pt(20 if level == 0 else 16)
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    props = prs.core_properties
    props.title = "IT Security Onboarding"
    props.author = "Northwind Labs Security Team"
    props.last_modified_by = "Northwind Labs Security Team"
    props.comments = "Shelfwise sample document. All content is fictional."
    props.subject = "Passwords, MFA, laptop encryption, phishing and VPN"
    props.created = FIXED_DATETIME
    props.modified = FIXED_DATETIME
    props.revision = 2
    prs.save(path)


# ------------------------------------------------------------------------------------------------------------
# benefits-and-pay.xlsx
# ------------------------------------------------------------------------------------------------------------

SALARY_BANDS = [
    ("Band", "Level name", "Example roles", "Minimum (EUR/year)", "Midpoint (EUR/year)",
     "Maximum (EUR/year)"),
    ("L1", "Associate", "Support Associate, Junior Assembly Technician", 34000, 39000, 44000),
    ("L2", "Professional", "Assembly Technician, Office Coordinator", 40000, 47000, 54000),
    ("L3", "Experienced Professional", "Software Engineer, Test Engineer", 50000, 59000, 68000),
    ("L4", "Senior Professional", "Senior Software Engineer, Product Designer", 62000, 73000, 84000),
    ("L5", "Lead", "Staff Engineer, Engineering Lead", 76000, 89000, 102000),
    ("L6", "Manager", "Engineering Manager, Head of Finance", 90000, 106000, 122000),
    ("L7", "Director", "Director of Engineering, Director of Operations", 110000, 130000, 150000),
]
PAY_CALENDAR = [
    ("Pay item", "When", "Details"),
    ("Monthly salary", "25th of each month",
     "Paid on the last working day before the 25th if the 25th is a weekend day or public holiday"),
    ("Holiday allowance", "With the May salary", "8 percent of gross annual salary"),
    ("Annual salary review", "1 April", "Increase depends on position in band and the review outcome"),
    ("Performance bonus", "With the March salary", "Up to 10 percent of annual salary, for bands L4 to L7"),
]
BENEFITS = [
    ("Benefit", "Provider", "Company contribution", "Eligibility", "How to enrol"),
    ("Pension", "Harbourline Pension Fund", "6 percent of gross salary; the employee pays 3 percent",
     "All employees from the first day", "Automatic"),
    ("Health insurance", "Meridian Health", "EUR 60 per month towards the premium", "All employees",
     "Benefits portal, within 30 days of joining"),
    ("Learning budget", "Any accredited training provider",
     "EUR 1,500 per calendar year; unused budget does not carry over", "After probation",
     "Learning request in the HR system"),
    ("Gym and sports", "Any gym or sports club", "50 percent of the membership fee, up to EUR 40 per month",
     "All employees", "Upload proof of membership in the benefits portal"),
    ("Bicycle lease", "Pedalia", "Bikes worth up to EUR 2,000, repaid from gross salary over 36 months",
     "Permanent contracts", "Benefits portal"),
    ("Lunch", "Office canteen", "Free lunch on office days", "Everyone working in the office",
     "No enrolment needed"),
    ("Commuting allowance", "Payroll", "EUR 0.19 per km for office days, up to 60 km one way",
     "Employees living more than 10 km from their office", "Commute form in the HR system"),
    ("Employee assistance", "Clearwater Counselling", "Up to 6 free confidential sessions per year",
     "All employees and their household", "Call +31 10 555 0170"),
]
HOLIDAYS_2026 = [
    (dt.date(2026, 1, 1), "New Year's Day", "All offices"),
    (dt.date(2026, 4, 3), "Good Friday", "All offices"),
    (dt.date(2026, 4, 6), "Easter Monday", "Rotterdam"),
    (dt.date(2026, 4, 27), "King's Day", "Rotterdam"),
    (dt.date(2026, 5, 5), "Liberation Day", "Rotterdam"),
    (dt.date(2026, 5, 14), "Ascension Day", "Rotterdam"),
    (dt.date(2026, 5, 25), "Whit Monday", "Rotterdam"),
    (dt.date(2026, 6, 4), "Corpus Christi", "Lisbon"),
    (dt.date(2026, 6, 10), "Portugal Day", "Lisbon"),
    (dt.date(2026, 6, 12), "Northwind Founders Day", "All offices"),
    (dt.date(2026, 10, 5), "Republic Day", "Lisbon"),
    (dt.date(2026, 12, 8), "Immaculate Conception", "Lisbon"),
    (dt.date(2026, 12, 25), "Christmas Day", "All offices"),
]


def build_xlsx(path: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Font, PatternFill

    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="DCE9EC")

    def write_table(ws, top: int, rows, money_cols=()) -> int:
        for r, row in enumerate(rows):
            for c, value in enumerate(row, start=1):
                cell = ws.cell(row=top + r, column=c, value=value)
                if r == 0:
                    cell.font = bold
                    cell.fill = fill
                elif c in money_cols:
                    cell.number_format = "#,##0"
        return top + len(rows)

    wb = Workbook()
    ws = wb.active
    ws.title = "Salary bands"
    next_row = write_table(ws, 1, SALARY_BANDS, money_cols=(4, 5, 6))
    write_table(ws, next_row + 1, PAY_CALENDAR)  # one blank row, then the second table region
    for col, width in zip("ABCDEF", (10, 26, 48, 20, 20, 20), strict=True):
        ws.column_dimensions[col].width = width
    ws.freeze_panes = "A2"

    ws = wb.create_sheet("Benefits")
    write_table(ws, 1, BENEFITS)
    for col, width in zip("ABCDE", (22, 32, 58, 44, 46), strict=True):
        ws.column_dimensions[col].width = width
    ws.freeze_panes = "A2"

    ws = wb.create_sheet("Holidays 2026")
    rows: list[tuple[Any, ...]] = [("Date", "Day", "Holiday", "Offices")]
    rows += [(d, d.strftime("%A"), name, offices) for d, name, offices in HOLIDAYS_2026]
    write_table(ws, 1, rows)
    for r in range(2, len(rows) + 1):
        ws.cell(row=r, column=1).number_format = "yyyy-mm-dd"
    for col, width in zip("ABCD", (14, 12, 28, 14), strict=True):
        ws.column_dimensions[col].width = width
    ws.freeze_panes = "A2"

    wb.properties.title = "Benefits and Pay 2026"
    wb.properties.creator = "Northwind Labs People Team"
    wb.properties.lastModifiedBy = "Northwind Labs People Team"
    wb.properties.created = FIXED_DATETIME
    wb.properties.modified = FIXED_DATETIME
    wb.save(path)


# ------------------------------------------------------------------------------------------------------------
# facilities.md and new-starter-faq.txt
# ------------------------------------------------------------------------------------------------------------

FACILITIES_MD = """\
# Facilities Guide

This guide covers the Northwind Labs buildings: where they are, how to use them, and what to do in an
emergency. It is maintained by the Facilities Team (facilities@northwindlabs.example) and was last updated in
January 2026.

## Office locations

### Rotterdam headquarters

The headquarters is at Lantern Quay 14, Rotterdam. The ground floor holds reception and the canteen, the first
floor the hardware lab, and the second and third floors the desk areas. The building is open from 07:00 to
21:00 on weekdays. Outside these hours your badge only opens the doors if Facilities has approved after-hours
access.

### Lisbon engineering studio

The Lisbon studio is on the top floor of Travessa do Barometro 7, Lisbon, and seats 60 people. It is open from
08:00 to 20:00 on weekdays. The studio has its own small test room for Skylark stations but no hardware lab.

## Desks and meeting rooms

All desks are flexible and are booked in the Deskbook app. Meeting rooms are named after winds: Mistral,
Sirocco, Bora and Zephyr in Rotterdam, and Levante and Nortada in Lisbon. A room booking that is not checked
in within 10 minutes of its start is released automatically.

## Parking

The Rotterdam office has 12 parking spaces in the underground garage. Book a space in the ParkPal app by 16:00
on the previous working day. Four of the spaces have chargers for electric cars; charging is limited to 3
hours per car per day, after which you move the car to a normal space.

The Lisbon studio has no parking of its own. The nearest public garage is 300 metres away and is not
reimbursed.

### Bicycles

The Rotterdam bicycle storage holds 60 bikes and is reached through the west entrance with your badge. Bikes
that stay in the storage for more than 30 days without moving are labelled and then removed.

## Visitors

Register visitors in the Frontdesk system at least 24 hours before they arrive. Visitors sign in at reception
and wear a visitor badge at all times. The host escorts visitors everywhere beyond reception and returns the
badge when they leave. Visitors may not enter the hardware lab without a safety induction. Guests can use the
NW-Guest Wi-Fi network; the password is printed on the visitor badge and is valid for one day.

## Fire safety

If the fire alarm sounds with a continuous tone, leave the building by the nearest stairs and never use the
lifts. The Rotterdam assembly point is the grass field at the end of Lantern Quay, next to the blue crane. The
Lisbon assembly point is the courtyard behind the building.

Fire wardens wear orange vests, and there is at least one warden on every floor. They check the floor is empty
and report to the head warden at the assembly point. Fire drills are held twice a year, in April and October.
The alarm is tested every Monday at 11:00 with a short intermittent tone; you do not need to leave the
building.

## First aid

First-aid kits are kept at reception and in the hardware lab, and a defibrillator (AED) hangs next to the
reception desk in Rotterdam. Trained first aiders are listed on the intranet; there are at least two on every
floor. In an emergency, call 112 first and then reception on extension 2000.

## Lost and found

Items found in the building are handed in at reception. They are kept for 30 days and then donated to charity.
"""

FAQ_TXT = """\
NORTHWIND LABS - NEW STARTER FAQ

Answers to the questions new colleagues ask most in their first weeks. For anything not covered here, ask your
buddy or write to people@northwindlabs.example.

Q: What time should I arrive on my first day?
A: Come to reception at 09:00 on your first day. Your buddy meets you there and takes you to the IT hand-over
at 09:30, where you receive your laptop and set up MFA.

Q: What is the buddy programme?
A: Every new starter is paired with a buddy from another team for their first 3 months. Your buddy shows you
around, has lunch with you in your first week and joins your six-week check-in if you want.

Q: When is salary paid?
A: Salaries are paid on the 25th of each month. The payroll team answers questions at
payroll@northwindlabs.example within 2 working days.

Q: Can I bring my dog to the office?
A: Dogs are welcome in the Rotterdam office on Fridays only, with a maximum of 5 dogs per day. Register your
dog in Deskbook the day before. Dogs are not allowed in the hardware lab or the canteen.

Q: Is there a staff discount on our products?
A: Employees get a 30 percent discount on one Skylark station per year for personal use. Order it through the
internal shop on the intranet.

Q: Where do I find the wiki?
A: The wiki is at wiki.northwindlabs.example. Outside the office it is only reachable through the NorthGate
VPN.

Q: Who do I call if my laptop breaks?
A: Call the Service Desk on extension 4300 between 08:00 and 18:00, or drop by the IT corner on the second
floor in Rotterdam. Security incidents go to the Security Desk on extension 4400 at any time.
"""


# ------------------------------------------------------------------------------------------------------------
# Gold questions
# ------------------------------------------------------------------------------------------------------------

QUESTIONS: list[dict[str, Any]] = [
    {
        "question": "How many days of paid annual leave does a full-time employee get per year?",
        "answer": "27 days",
        "file": "handbook.pdf",
        "location": {"page": 5},
        "evidence": "Full-time employees receive 27 days of paid annual leave per calendar year.",
    },
    {
        "question": "By what date must carried-over annual leave days be taken?",
        "answer": "31 March",
        "file": "handbook.pdf",
        "location": {"page": 5},
        "evidence": "Carried-over days must be taken by 31 March, after which they expire.",
    },
    {
        "question": "From which day of sickness is a medical certificate required?",
        "answer": "From the fourth consecutive calendar day of absence",
        "file": "handbook.pdf",
        "location": {"page": 6},
        "evidence": "A medical certificate is required from the fourth consecutive calendar day of absence.",
    },
    {
        "question": "How many weeks of fully paid parental leave does the non-birth parent receive?",
        "answer": "8 weeks",
        "file": "handbook.pdf",
        "location": {"page": 7},
        "evidence": "The non-birth parent, including an adoptive or foster parent, receives 8 weeks of fully "
        "paid parental leave, which must be taken within 12 months of the birth or adoption.",
    },
    {
        "question": "What are the core working hours at Northwind Labs?",
        "answer": "10:00 to 15:00, Monday to Friday",
        "file": "handbook.pdf",
        "location": {"page": 3},
        "evidence": "Core hours are 10:00 to 15:00, Monday to Friday, and all employees are expected to be "
        "available for meetings during those hours.",
    },
    {
        "question": "Which form do you use to get overtime approved?",
        "answer": "The Overtime Request form OT-2 in the HR system",
        "file": "handbook.pdf",
        "location": {"page": 4},
        "evidence": "Approval is requested with the Overtime Request form OT-2 in the HR system before the "
        "extra hours are worked.",
    },
    {
        "question": "How much is the one-time home office allowance?",
        "answer": "EUR 600",
        "file": "handbook.pdf",
        "location": {"page": 8},
        "evidence": "When you start working remotely, you receive a one-time home office allowance of EUR "
        "600 for a desk, chair, screen or other equipment.",
    },
    {
        "question": "Up to what value may an employee accept a gift?",
        "answer": "EUR 50 per occasion",
        "file": "handbook.pdf",
        "location": {"page": 10},
        "evidence": "You may accept gifts or hospitality with a value of up to EUR 50 per occasion.",
    },
    {
        "question": "How much is the daily allowance for a business trip to London?",
        "answer": "EUR 75 per day",
        "file": "travel-and-expenses.docx",
        "location": {"heading": "Per diems and meals"},
        "evidence": "EUR 75",
    },
    {
        "question": "By how much is the per diem reduced when lunch is provided free of charge?",
        "answer": "35 percent",
        "file": "travel-and-expenses.docx",
        "location": {"heading": "Meals"},
        "evidence": "If a meal is provided free of charge, for example by a customer or at a conference, "
        "reduce the per diem for that day by 20 percent for breakfast and by 35 percent each for lunch and "
        "dinner.",
    },
    {
        "question": "Within how many days of returning must an expense claim be submitted?",
        "answer": "Within 30 days, in the Ledgerly app",
        "file": "travel-and-expenses.docx",
        "location": {"heading": "Submitting claims"},
        "evidence": "Submit expense claims in the Ledgerly app within 30 days of returning from your trip.",
    },
    {
        "question": "What is the mileage rate for business trips in your own car?",
        "answer": "EUR 0.30 per kilometre",
        "file": "travel-and-expenses.docx",
        "location": {"heading": "Mileage"},
        "evidence": "Business trips in your own car are reimbursed at EUR 0.30 per kilometre, plus parking "
        "and tolls.",
    },
    {
        "question": "What is the minimum length of the passphrase for a Northwind account?",
        "answer": "14 characters",
        "file": "it-security-onboarding.pptx",
        "location": {"slide": 2},
        "evidence": "Use a passphrase of at least 14 characters for your Northwind account",
    },
    {
        "question": "Within how many working days must new starters enrol the MFA app?",
        "answer": "Within the first 2 working days (Northwind Verify app)",
        "file": "it-security-onboarding.pptx",
        "location": {"slide": 3},
        "evidence": "Enrol the Northwind Verify app within your first 2 working days",
    },
    {
        "question": "How do you report a suspicious email?",
        "answer": "With the Report Phish button in the mail client, or by forwarding it to "
        "phish@northwindlabs.example",
        "file": "it-security-onboarding.pptx",
        "location": {"slide": 5},
        "evidence": "Report suspicious email with the Report Phish button in the mail client",
    },
    {
        "question": "How large is the yearly learning budget?",
        "answer": "EUR 1,500 per calendar year",
        "file": "benefits-and-pay.xlsx",
        "location": {"sheet": "Benefits", "cells": None},
        "evidence": "EUR 1,500 per calendar year; unused budget does not carry over",
    },
    {
        "question": "When is the holiday allowance paid and how much is it?",
        "answer": "With the May salary; 8 percent of gross annual salary",
        "file": "benefits-and-pay.xlsx",
        "location": {"sheet": "Salary bands", "cells": None},
        "evidence": "8 percent of gross annual salary",
    },
    {
        "question": "On what date is Northwind Founders Day in 2026?",
        "answer": "Friday 12 June 2026",
        "file": "benefits-and-pay.xlsx",
        "location": {"sheet": "Holidays 2026", "cells": None},
        "evidence": "Northwind Founders Day",
    },
    {
        "question": "How do you book a parking space at the Rotterdam office?",
        "answer": "In the ParkPal app, by 16:00 on the previous working day",
        "file": "facilities.md",
        "location": {"heading": "Parking"},
        "evidence": "Book a space in the ParkPal app by 16:00 on the previous working day.",
    },
    {
        "question": "When is the fire alarm tested?",
        "answer": "Every Monday at 11:00",
        "file": "facilities.md",
        "location": {"heading": "Fire safety"},
        "evidence": "The alarm is tested every Monday at 11:00 with a short intermittent tone; you do not "
        "need to leave the building.",
    },
    {
        "question": "What time should a new starter arrive on the first day?",
        "answer": "09:00 at reception",
        "file": "new-starter-faq.txt",
        "location": {"heading": "What time should I arrive on my first day?"},
        "evidence": "A: Come to reception at 09:00 on your first day.",
    },
]


# ------------------------------------------------------------------------------------------------------------
# Verification: read everything back with the same libraries
# ------------------------------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split())


def pdf_pages_text(path: Path) -> list[str]:
    import pymupdf

    with pymupdf.open(path) as doc:
        return [_norm(page.get_text()) for page in doc]


def docx_sections(path: Path) -> dict[str, str]:
    """Text under each heading (paragraphs and tables, up to the next heading of any level)."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(path)
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            style = item.style.name if item.style is not None else ""
            if style.startswith("Heading") or style == "Title":
                current = item.text
                sections.setdefault(current, [])
            else:
                sections[current].append(item.text)
        elif isinstance(item, Table):
            for row in item.rows:
                for cell in row.cells:
                    sections[current].append(cell.text)
    return {k: _norm(" | ".join(v)) for k, v in sections.items()}


def pptx_slides_text(path: Path) -> list[str]:
    from pptx import Presentation

    out: list[str] = []
    for slide in Presentation(path).slides:
        parts: list[str] = []
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.extend(p.text for p in shape.text_frame.paragraphs)
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    parts.extend(cell.text for cell in row.cells)
        if slide.has_notes_slide:
            parts.append(slide.notes_slide.notes_text_frame.text)
        out.append(_norm(" | ".join(parts)))
    return out


def xlsx_find(path: Path, sheet: str, needle: str) -> str | None:
    """Coordinate of the cell on ``sheet`` whose value equals ``needle`` (or None)."""
    from openpyxl import load_workbook

    wb = load_workbook(path, read_only=True)
    try:
        for row in wb[sheet].iter_rows():
            for cell in row:
                if cell.value is not None and str(cell.value) == needle:
                    return cell.coordinate
    finally:
        wb.close()
    return None


def text_sections(path: Path, fmt: str) -> dict[str, tuple[int, str]]:
    """Markdown: text under each ``#`` heading. FAQ: text under each ``Q:`` line (heading = the question).

    Returns heading -> (1-based line of the heading, normalised text of the section).
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    sections: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    for lineno, line in enumerate(lines, start=1):
        if fmt == "md":
            m = re.match(r"^(#{1,6})\s+(.*)$", line)
            heading = m.group(2).strip() if m else None
        else:
            heading = line[3:].strip() if line.startswith("Q: ") else None
        if heading is not None:
            current = heading
            sections[current] = (lineno, [])
        elif current is not None:
            sections[current][1].append(line)
    return {k: (n, _norm(" ".join(v))) for k, (n, v) in sections.items()}


def verify(out_dir: Path, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assert the generated files are what we claim; return the questions with locations filled in."""
    import pymupdf

    problems: list[str] = []

    # --- PDF: page count, font sizes, outline pages, metadata
    pdf_path = out_dir / "handbook.pdf"
    pages = pdf_pages_text(pdf_path)
    with pymupdf.open(pdf_path) as doc:
        if not 8 <= doc.page_count <= 12:
            problems.append(f"handbook.pdf has {doc.page_count} pages")
        if doc.metadata.get("title") != HANDBOOK_TITLE:
            problems.append("handbook.pdf metadata title missing")
        toc = doc.get_toc()
        if toc != handbook_toc() or {lvl for lvl, _, _ in toc} != {1, 2}:
            problems.append("handbook.pdf outline differs from the intended one")
        for _lvl, title, pno in toc:
            if title not in pages[pno - 1]:
                problems.append(f"outline entry {title!r} is not on page {pno}")
        sizes: dict[str, set[float]] = {"h": set(), "body": set()}
        for span_page in doc:
            for block in span_page.get_text("dict")["blocks"]:
                for line in block.get("lines", []):
                    for span in line["spans"]:
                        text = span["text"].strip()
                        if not text:
                            continue
                        key = "h" if any(text == t for _, t, _ in toc) else "body"
                        sizes[key].add(round(span["size"], 1))
        if not sizes["h"] or min(sizes["h"]) < 13.5 or max(sizes["body"] - {8.0, 30.0}) > 11.5:
            problems.append(f"unexpected PDF font sizes {sizes}")

    # --- the other files
    docx_secs = docx_sections(out_dir / "travel-and-expenses.docx")
    slides = pptx_slides_text(out_dir / "it-security-onboarding.pptx")
    if not 8 <= len(slides) <= 10:
        problems.append(f"pptx has {len(slides)} slides")
    md_secs = text_sections(out_dir / "facilities.md", "md")
    faq_secs = text_sections(out_dir / "new-starter-faq.txt", "txt")
    for heading in ("Per diems and meals", "Meals", "Submitting claims", "Mileage", "Lost receipts"):
        if heading not in docx_secs:
            problems.append(f"docx heading {heading!r} missing")

    # --- every question's evidence at its stated location
    checked: list[dict[str, Any]] = []
    for q in questions:
        q = json.loads(json.dumps(q))
        loc, ev, fname = q["location"], _norm(q["evidence"]), q["file"]
        if fname == "handbook.pdf":
            ok = ev in pages[loc["page"] - 1]
            if ok and sum(ev in p for p in pages) != 1:
                problems.append(f"evidence occurs on several pages: {ev!r}")
        elif fname.endswith(".docx"):
            ok = ev in docx_secs.get(loc["heading"], "")
        elif fname.endswith(".pptx"):
            ok = ev in slides[loc["slide"] - 1]
        elif fname.endswith(".xlsx"):
            coord = xlsx_find(out_dir / fname, loc["sheet"], q["evidence"])
            ok = coord is not None
            if ok:
                loc["cells"] = coord
        elif fname.endswith(".md") or fname.endswith(".txt"):
            secs = md_secs if fname.endswith(".md") else faq_secs
            ok = ev in secs.get(loc["heading"], (0, ""))[1]
            if ok:
                raw = (out_dir / fname).read_text(encoding="utf-8").splitlines()
                first_words = q["evidence"][:30]
                start = secs[loc["heading"]][0]
                loc["line"] = next(i for i, ln in enumerate(raw, 1) if i > start and first_words in ln)
                if fname.endswith(".txt"):  # plain text has no headings for parsers; the line is the location
                    del loc["heading"]
        else:
            ok = False
        if not ok:
            problems.append(f"evidence not found at {fname} {loc}: {q['evidence']!r}")
        checked.append(q)

    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file())
    if total >= 1_000_000:
        problems.append(f"sample collection is {total} bytes (limit 1 MB)")
    if problems:
        raise AssertionError("sample verification failed:\n  " + "\n  ".join(problems))
    return checked


# ------------------------------------------------------------------------------------------------------------
# Icon
# ------------------------------------------------------------------------------------------------------------


def render_icon(svg: Path = ICON_SVG, png: Path = ICON_PNG, size: int = 256) -> None:
    """Render the SVG mark to a PNG with Qt, offscreen."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise RuntimeError(f"invalid SVG: {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise RuntimeError(f"could not write {png}")


# ------------------------------------------------------------------------------------------------------------


def normalize_zip(path: Path) -> None:
    """Rewrite an Office (zip) file with fixed member timestamps so repeated runs give identical bytes."""
    with zipfile.ZipFile(path) as src:
        members = [(info.filename, src.read(info)) for info in src.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name, data in members:
            if name == "docProps/core.xml":  # openpyxl stamps the save time into dcterms:modified
                data = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rb"\g<1>" + FIXED_DATETIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode() + rb"\g<2>",
                    data,
                )
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            dst.writestr(info, data)


def build_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    targets = {
        "handbook.pdf": build_pdf,
        "travel-and-expenses.docx": build_docx,
        "it-security-onboarding.pptx": build_pptx,
        "benefits-and-pay.xlsx": build_xlsx,
    }
    written: list[Path] = []
    for name, builder in targets.items():
        path = out_dir / name
        builder(path)
        if path.suffix in (".docx", ".pptx", ".xlsx"):
            normalize_zip(path)
        written.append(path)
    for name, text in (("facilities.md", FACILITIES_MD), ("new-starter-faq.txt", FAQ_TXT)):
        path = out_dir / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="output folder (resources/sample)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS_PATH, help="gold questions JSONL")
    parser.add_argument("--icons", action="store_true", help="also render resources/icons/shelfwise.png")
    args = parser.parse_args(argv)

    written = build_all(args.out)
    checked = verify(args.out, QUESTIONS)
    args.questions.parent.mkdir(parents=True, exist_ok=True)
    with args.questions.open("w", encoding="utf-8", newline="\n") as fh:
        for q in checked:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    for path in written:
        print(f"{path.stat().st_size:>8}  {path}")
    print(f"{len(checked)} questions verified -> {args.questions}")
    if args.icons:
        render_icon()
        print(f"icon -> {ICON_PNG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
