"""A demo lab in six languages, answered by three models.

Northwind Bank's questions are asked in English, Chinese, Japanese, French, Arabic and Russian:

* ``polyglot`` answers every question correctly, in the question's language, in its own words;
* ``anglo`` answers correctly, but in English whenever the question is not (half the time);
* ``sloppy`` answers in the right language with the wrong figure now and then.

Each case's ``language`` is left for ``lab.languages.set`` to detect, except the
first case of each language, set by hand as a user would. ``python -m
evalnb.api.demo_languages data/demo_languages.json`` regenerates the committed file; the suite
checks that it is what this module produces.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from evalnb.api.lab import Lab
from evalnb.io.builder import LabBuilder
from evalnb.io.fields import Where

__all__ = ["build_demo_languages"]

_SEED = 20261127
# Per fact and language: (question, expected answer, a correct answer in other words,
# an answer with the wrong figure).
_FACTS: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "card_fee": {
        "en": (
            "How much does a replacement card cost?",
            "A replacement card costs 15 euros.",
            "Replacing a card costs 15 euros.",
            "A replacement card costs 25 euros.",
        ),
        "zh": (
            "补办银行卡需要多少钱？",
            "补办一张银行卡需要15欧元。",
            "补办银行卡的费用是15欧元。",
            "补办一张银行卡需要25欧元。",
        ),
        "ja": (
            "カードの再発行にはいくらかかりますか？",
            "カードの再発行には15ユーロかかります。",
            "再発行の手数料は15ユーロです。",
            "カードの再発行には25ユーロかかります。",
        ),
        "fr": (
            "Combien coûte une carte de remplacement ?",
            "Une carte de remplacement coûte 15 euros.",
            "Le remplacement d'une carte coûte 15 euros.",
            "Une carte de remplacement coûte 25 euros.",
        ),
        "ar": (
            "كم تكلفة البطاقة البديلة؟",
            "تكلفة البطاقة البديلة 15 يورو.",
            "استبدال البطاقة يكلف 15 يورو.",
            "تكلفة البطاقة البديلة 25 يورو.",
        ),
        "ru": (
            "Сколько стоит перевыпуск карты?",
            "Перевыпуск карты стоит 15 евро.",
            "За перевыпуск карты нужно заплатить 15 евро.",
            "Перевыпуск карты стоит 25 евро.",
        ),
    },
    "opening_hours": {
        "en": (
            "When do branches open on weekdays?",
            "Branches open at 9 a.m. on weekdays.",
            "On weekdays the branches open at 9 a.m.",
            "Branches open at 10 a.m. on weekdays.",
        ),
        "zh": (
            "工作日网点几点开门？",
            "网点在工作日早上9点开门。",
            "工作日的时候，网点早上9点开门。",
            "网点在工作日早上10点开门。",
        ),
        "ja": (
            "平日、支店は何時に開きますか？",
            "支店は平日の午前9時に開きます。",
            "平日は午前9時に支店が開きます。",
            "支店は平日の午前10時に開きます。",
        ),
        "fr": (
            "À quelle heure les agences ouvrent-elles en semaine ?",
            "Les agences ouvrent à 9 heures en semaine.",
            "En semaine, les agences ouvrent à 9 heures.",
            "Les agences ouvrent à 10 heures en semaine.",
        ),
        "ar": (
            "متى تفتح الفروع في أيام الأسبوع؟",
            "تفتح الفروع الساعة 9 صباحًا في أيام الأسبوع.",
            "في أيام الأسبوع تفتح الفروع الساعة 9 صباحًا.",
            "تفتح الفروع الساعة 10 صباحًا في أيام الأسبوع.",
        ),
        "ru": (
            "Во сколько открываются отделения в будни?",
            "В будни отделения открываются в 9 утра.",
            "Отделения в будние дни открываются в 9 утра.",
            "В будни отделения открываются в 10 утра.",
        ),
    },
    "transfer_limit": {
        "en": (
            "What is the daily transfer limit?",
            "The daily transfer limit is 5,000 euros.",
            "You can transfer up to 5,000 euros a day.",
            "The daily transfer limit is 2,000 euros.",
        ),
        "zh": (
            "每天的转账限额是多少？",
            "每日转账限额为5000欧元。",
            "每天最多可以转账5000欧元。",
            "每日转账限额为2000欧元。",
        ),
        "ja": (
            "1日の振込限度額はいくらですか？",
            "1日の振込限度額は5000ユーロです。",
            "1日に5000ユーロまで振り込めます。",
            "1日の振込限度額は2000ユーロです。",
        ),
        "fr": (
            "Quel est le plafond de virement quotidien ?",
            "Le plafond de virement quotidien est de 5 000 euros.",
            "Vous pouvez virer jusqu'à 5 000 euros par jour.",
            "Le plafond de virement quotidien est de 2 000 euros.",
        ),
        "ar": (
            "ما هو الحد اليومي للتحويل؟",
            "الحد اليومي للتحويل هو 5000 يورو.",
            "يمكنك تحويل ما يصل إلى 5000 يورو يوميًا.",
            "الحد اليومي للتحويل هو 2000 يورو.",
        ),
        "ru": (
            "Какой дневной лимит на переводы?",
            "Дневной лимит на переводы — 5000 евро.",
            "В день можно перевести до 5000 евро.",
            "Дневной лимит на переводы — 2000 евро.",
        ),
    },
    "savings_rate": {
        "en": (
            "What interest does the savings account pay?",
            "The savings account pays 2 percent a year.",
            "Savings earn 2 percent interest per year.",
            "The savings account pays 4 percent a year.",
        ),
        "zh": (
            "储蓄账户的利率是多少？",
            "储蓄账户的年利率为2%。",
            "储蓄每年可获得2%的利息。",
            "储蓄账户的年利率为4%。",
        ),
        "ja": (
            "普通預金の金利はいくらですか？",
            "普通預金の金利は年2%です。",
            "預金には年2%の利息がつきます。",
            "普通預金の金利は年4%です。",
        ),
        "fr": (
            "Quel est le taux du compte d'épargne ?",
            "Le compte d'épargne rapporte 2 % par an.",
            "L'épargne est rémunérée à 2 % par an.",
            "Le compte d'épargne rapporte 4 % par an.",
        ),
        "ar": (
            "ما هي فائدة حساب التوفير؟",
            "يدفع حساب التوفير فائدة 2 بالمئة سنويًا.",
            "تحصل المدخرات على فائدة 2 بالمئة في السنة.",
            "يدفع حساب التوفير فائدة 4 بالمئة سنويًا.",
        ),
        "ru": (
            "Какой процент по сберегательному счёту?",
            "Сберегательный счёт приносит 2 процента годовых.",
            "По сбережениям начисляется 2 процента в год.",
            "Сберегательный счёт приносит 4 процента годовых.",
        ),
    },
    "lost_card": {
        "en": (
            "What should I do if I lose my card?",
            "Call the card hotline at once; it is open day and night.",
            "Phone the card hotline right away, it answers around the clock.",
            "Visit a branch next week to report it.",
        ),
        "zh": (
            "银行卡丢了怎么办？",
            "请立即拨打银行卡热线，热线全天开放。",
            "马上打银行卡热线，热线二十四小时都有人接听。",
            "下周去网点挂失即可。",
        ),
        "ja": (
            "カードをなくしたらどうすればいいですか？",
            "すぐにカード専用ダイヤルに電話してください。24時間受け付けています。",
            "カード専用ダイヤルにすぐ電話してください。24時間対応です。",
            "来週、支店に行って届け出てください。",
        ),
        "fr": (
            "Que faire si je perds ma carte ?",
            "Appelez immédiatement la ligne d'urgence des cartes, ouverte jour et nuit.",
            "Téléphonez tout de suite à la ligne d'urgence des cartes, joignable jour et nuit.",
            "Passez en agence la semaine prochaine pour le signaler.",
        ),
        "ar": (
            "ماذا أفعل إذا فقدت بطاقتي؟",
            "اتصل فورًا بخط البطاقات الساخن، فهو متاح ليلًا ونهارًا.",
            "اتصل بخط البطاقات الساخن على الفور، فهو يعمل على مدار الساعة.",
            "قم بزيارة الفرع الأسبوع المقبل للإبلاغ عنها.",
        ),
        "ru": (
            "Что делать, если я потерял карту?",
            "Немедленно позвоните на горячую линию по картам, она работает круглосуточно.",
            "Сразу звоните на горячую линию по картам: она работает днём и ночью.",
            "Зайдите в отделение на следующей неделе и сообщите об этом.",
        ),
    },
    "overdraft_fee": {
        "en": (
            "Is there a fee for an overdraft?",
            "An overdraft costs 10 euros a month.",
            "Each month in overdraft costs 10 euros.",
            "An overdraft costs 30 euros a month.",
        ),
        "zh": (
            "透支需要付费吗？",
            "透支每月收费10欧元。",
            "每透支一个月需支付10欧元。",
            "透支每月收费30欧元。",
        ),
        "ja": (
            "当座貸越に手数料はかかりますか？",
            "当座貸越は月10ユーロかかります。",
            "当座貸越の手数料は毎月10ユーロです。",
            "当座貸越は月30ユーロかかります。",
        ),
        "fr": (
            "Un découvert est-il payant ?",
            "Un découvert coûte 10 euros par mois.",
            "Chaque mois de découvert coûte 10 euros.",
            "Un découvert coûte 30 euros par mois.",
        ),
        "ar": (
            "هل هناك رسوم على السحب على المكشوف؟",
            "السحب على المكشوف يكلف 10 يورو شهريًا.",
            "كل شهر من السحب على المكشوف يكلف 10 يورو.",
            "السحب على المكشوف يكلف 30 يورو شهريًا.",
        ),
        "ru": (
            "Платный ли овердрафт?",
            "Овердрафт стоит 10 евро в месяц.",
            "Каждый месяц овердрафта обходится в 10 евро.",
            "Овердрафт стоит 30 евро в месяц.",
        ),
    },
}
_LANGUAGES = ("en", "zh", "ja", "fr", "ar", "ru")
_MODELS = ("polyglot", "anglo", "sloppy")


def build_demo_languages() -> Lab:
    """Build the multilingual demo lab: 6 facts × 6 languages, three models.

    Returns
    -------
    Lab
        36 cases (topic: the fact), 108 answers.
    """
    rng = random.Random(_SEED)
    b = LabBuilder()
    where = Where("evalnb.api.demo_languages")
    for lang in _LANGUAGES:
        for i, (topic, versions) in enumerate(_FACTS.items()):
            question, expected, good, wrong = versions[lang]
            case = {
                "prompt": question,
                "expected": [expected],
                "topic": topic,
                "categories": ["question_answering"],
                # The first case of each language says its language; the others are detected.
                "language": lang if i == 0 else None,
            }
            case_id = b.add_case(case, where, id_field="key")
            english = versions["en"][2]
            answers = {
                "polyglot": good,
                "anglo": english if lang != "en" and rng.random() < 0.5 else good,
                "sloppy": wrong if rng.random() < 0.4 else good,
            }
            for model in _MODELS:
                b.add_output(
                    {"case_id": case_id, "model": model, "actual": answers[model]},
                    where,
                    id_field="key",
                )
    b.info.update(
        name="Northwind Bank in six languages (demo)",
        description="Multilingual demo lab generated by evalnb.api.demo_languages (seeded).",
    )
    return Lab(b.frames())


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "data/demo_languages.json")
    build_demo_languages().export(out)
    print(f"wrote {out}")
