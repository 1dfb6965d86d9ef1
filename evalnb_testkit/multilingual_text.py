"""Sentence pairs in nine languages for the language tests, written for them.

Each pair is a sentence and a paraphrase of it (same meaning, other words or order); a
sentence of another pair of the same language is an unrelated answer.
"""

from __future__ import annotations

PAIRS: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("Paris is the capital of France.", "The capital of France is Paris."),
        ("The train leaves at eight in the morning.", "At eight in the morning the train leaves."),
        (
            "Water boils at one hundred degrees Celsius.",
            "At one hundred degrees Celsius, water boils.",
        ),
        ("She bought three apples at the market.", "At the market she bought three apples."),
        ("The museum is closed on Mondays.", "On Mondays the museum is closed."),
        (
            "Our office moved to a larger building last year.",
            "Last year our office moved into a bigger building.",
        ),
        ("Please reset your password before Friday.", "Before Friday, please reset your password."),
        (
            "The river flows from the mountains to the sea.",
            "From the mountains the river flows to the sea.",
        ),
    ],
    "zh": [
        ("巴黎是法国的首都。", "法国的首都是巴黎。"),
        ("火车早上八点出发。", "早上八点火车就出发了。"),
        ("水在一百摄氏度时沸腾。", "在一百摄氏度的时候水会沸腾。"),
        ("她在市场上买了三个苹果。", "她在市场买了三个苹果回来。"),
        ("博物馆每周一闭馆。", "每周一博物馆都不开放。"),
        ("去年我们的办公室搬到了一栋更大的楼里。", "我们的办公室去年搬进了更大的大楼。"),
        ("请在星期五之前重置您的密码。", "星期五以前请重置密码。"),
        ("这条河从山上流向大海。", "这条河从山里一直流到大海。"),
    ],
    "ja": [
        ("パリはフランスの首都です。", "フランスの首都はパリです。"),
        ("電車は朝八時に出発します。", "朝八時に電車が出発します。"),
        ("水は百度で沸騰します。", "百度になると水は沸騰します。"),
        ("彼女は市場でりんごを三つ買いました。", "市場で彼女はりんごを三つ買いました。"),
        ("博物館は月曜日が休館です。", "月曜日は博物館が休みです。"),
        (
            "去年、私たちの事務所はもっと大きなビルに移りました。",
            "私たちの事務所は去年大きなビルへ移転しました。",
        ),
        (
            "金曜日までにパスワードを再設定してください。",
            "パスワードは金曜日までに再設定してください。",
        ),
        ("川は山から海へ流れています。", "その川は山から海まで流れています。"),
    ],
    "ko": [
        ("파리는 프랑스의 수도입니다.", "프랑스의 수도는 파리입니다."),
        ("기차는 아침 여덟 시에 출발합니다.", "아침 여덟 시에 기차가 출발합니다."),
        ("물은 섭씨 백 도에서 끓습니다.", "섭씨 백 도가 되면 물이 끓습니다."),
        ("그녀는 시장에서 사과 세 개를 샀습니다.", "시장에서 그녀는 사과를 세 개 샀습니다."),
        ("박물관은 월요일마다 문을 닫습니다.", "월요일에는 박물관이 문을 열지 않습니다."),
        (
            "작년에 우리 사무실은 더 큰 건물로 이사했습니다.",
            "우리 사무실은 작년에 더 큰 건물로 옮겼습니다.",
        ),
        ("금요일 전에 비밀번호를 재설정해 주세요.", "비밀번호를 금요일까지 재설정해 주세요."),
        ("강은 산에서 바다로 흐릅니다.", "그 강은 산에서 바다까지 흐릅니다."),
    ],
    "fr": [
        ("Paris est la capitale de la France.", "La capitale de la France est Paris."),
        ("Le train part à huit heures du matin.", "À huit heures du matin, le train part."),
        ("L'eau bout à cent degrés Celsius.", "À cent degrés Celsius, l'eau se met à bouillir."),
        ("Elle a acheté trois pommes au marché.", "Au marché, elle a acheté trois pommes."),
        ("Le musée est fermé le lundi.", "Le lundi, le musée n'ouvre pas."),
        (
            "L'année dernière, notre bureau a déménagé dans un immeuble plus grand.",
            "Notre bureau s'est installé dans un immeuble plus grand l'année dernière.",
        ),
        (
            "Veuillez réinitialiser votre mot de passe avant vendredi.",
            "Avant vendredi, réinitialisez votre mot de passe, s'il vous plaît.",
        ),
        (
            "La rivière coule des montagnes jusqu'à la mer.",
            "Des montagnes jusqu'à la mer, la rivière s'écoule.",
        ),
    ],
    "de": [
        ("Paris ist die Hauptstadt von Frankreich.", "Die Hauptstadt Frankreichs ist Paris."),
        ("Der Zug fährt um acht Uhr morgens ab.", "Um acht Uhr morgens fährt der Zug ab."),
        (
            "Wasser kocht bei hundert Grad Celsius.",
            "Bei hundert Grad Celsius beginnt Wasser zu kochen.",
        ),
        ("Sie hat auf dem Markt drei Äpfel gekauft.", "Auf dem Markt hat sie drei Äpfel gekauft."),
        ("Das Museum ist montags geschlossen.", "Montags hat das Museum geschlossen."),
        (
            "Letztes Jahr ist unser Büro in ein größeres Gebäude umgezogen.",
            "Unser Büro zog letztes Jahr in ein größeres Gebäude.",
        ),
        (
            "Bitte setzen Sie Ihr Passwort vor Freitag zurück.",
            "Setzen Sie Ihr Passwort bitte bis Freitag zurück.",
        ),
        (
            "Der Fluss fließt von den Bergen bis zum Meer.",
            "Von den Bergen fließt der Fluss bis ins Meer.",
        ),
    ],
    "ru": [
        ("Париж — столица Франции.", "Столица Франции — Париж."),
        ("Поезд отправляется в восемь часов утра.", "В восемь утра поезд отправляется."),
        ("Вода кипит при ста градусах Цельсия.", "При ста градусах Цельсия вода закипает."),
        ("Она купила на рынке три яблока.", "На рынке она купила три яблока."),
        ("По понедельникам музей закрыт.", "Музей закрыт по понедельникам."),
        (
            "В прошлом году наш офис переехал в здание побольше.",
            "Наш офис в прошлом году переехал в большее здание.",
        ),
        ("Пожалуйста, смените пароль до пятницы.", "Смените, пожалуйста, пароль до пятницы."),
        ("Река течёт с гор к морю.", "С гор река течёт прямо к морю."),
    ],
    "ar": [
        ("باريس هي عاصمة فرنسا.", "عاصمة فرنسا هي باريس."),
        ("يغادر القطار في الساعة الثامنة صباحًا.", "في الساعة الثامنة صباحًا يغادر القطار."),
        ("يغلي الماء عند مئة درجة مئوية.", "عند مئة درجة مئوية يبدأ الماء بالغليان."),
        ("اشترت ثلاث تفاحات من السوق.", "من السوق اشترت ثلاث تفاحات."),
        ("المتحف مغلق يوم الاثنين.", "يوم الاثنين يكون المتحف مغلقًا."),
        (
            "في العام الماضي انتقل مكتبنا إلى مبنى أكبر.",
            "انتقل مكتبنا في العام الماضي إلى مبنى أكبر.",
        ),
        (
            "يرجى إعادة تعيين كلمة المرور قبل يوم الجمعة.",
            "قبل يوم الجمعة يرجى إعادة تعيين كلمة المرور.",
        ),
        ("يجري النهر من الجبال إلى البحر.", "من الجبال يجري النهر حتى البحر."),
    ],
    "hi": [
        ("पेरिस फ्रांस की राजधानी है।", "फ्रांस की राजधानी पेरिस है।"),
        ("ट्रेन सुबह आठ बजे निकलती है।", "सुबह आठ बजे ट्रेन निकलती है।"),
        ("पानी सौ डिग्री सेल्सियस पर उबलता है।", "सौ डिग्री सेल्सियस पर पानी उबलने लगता है।"),
        ("उसने बाज़ार से तीन सेब खरीदे।", "बाज़ार से उसने तीन सेब खरीदे।"),
        ("संग्रहालय सोमवार को बंद रहता है।", "सोमवार को संग्रहालय बंद रहता है।"),
        ("पिछले साल हमारा दफ़्तर एक बड़ी इमारत में चला गया।", "हमारा दफ़्तर पिछले साल एक बड़ी इमारत में गया।"),
        ("कृपया शुक्रवार से पहले अपना पासवर्ड बदल दें।", "शुक्रवार से पहले कृपया पासवर्ड बदल दें।"),
        ("नदी पहाड़ों से समुद्र की ओर बहती है।", "पहाड़ों से नदी समुद्र तक बहती है।"),
    ],
}
"""Per language, (sentence, paraphrase) pairs."""
