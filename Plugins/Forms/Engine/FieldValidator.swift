import Foundation
import SanadCore

/// Why an answer was refused: what is wrong and how to fix it, for the person.
public struct AnswerProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String
    public var suggestion: String

    public init(field: String, message: String, suggestion: String) {
        self.field = field
        self.message = message
        self.suggestion = suggestion
    }

    public var description: String { "\(message) \(suggestion)" }
}

/// Checks one answer against its field's type and `validation`, and returns its normal form (`yes`, `2026-01-31`,
/// `CA`, `+15551234567`).
public struct FieldValidator: Sendable {
    /// Dates limited to `past` or `future` are compared with this day.
    public var today: CivilDate
    /// Labels in messages are in this language.
    public var language: String

    public init(today: CivilDate, language: String = "en") {
        self.today = today
        self.language = language
    }

    /// `en`, `ar` or `es` by the session's language (English for any other).
    func t(_ en: String, _ ar: String, _ es: String) -> String {
        switch language {
        case "ar": return ar
        case "es": return es
        default: return en
        }
    }

    /// Words for yes and no in English, Arabic and Spanish (lower-cased, accents kept).
    static let yesWords: Set<String> = ["yes", "y", "true", "نعم", "اي", "أجل", "sí", "si", "s"]
    static let noWords: Set<String> = ["no", "n", "false", "لا", "كلا"]

    /// The most characters any answer may have, free text included; a field's `maxLength` can only lower it.
    public static let maxAnswerCharacters = 1000

    private func tooLong(_ n: Int, got: Int, unit: String) -> String {
        let arabicUnit = unit == "bytes" ? "بايت" : "حرفاً"
        let spanishUnit = unit == "bytes" ? "bytes" : "caracteres"
        return t(
            "at most \(n) characters are accepted (got \(got) \(unit)).",
            "يُقبل \(n) حرفاً على الأكثر (كُتب \(got) \(arabicUnit)).",
            "se aceptan como máximo \(n) caracteres (hay \(got) \(spanishUnit)).")
    }

    private var shortenIt: String { t("Shorten or abbreviate it.", "اختصره.", "Acórtelo o abrévielo.") }

    /// The normal form of `raw` for `field`, or the problem.
    public func normalize(_ raw: String, for field: FormTemplate.Field) -> Result<String, AnswerProblem> {
        func problem(_ message: String, _ suggestion: String) -> Result<String, AnswerProblem> {
            .failure(
                AnswerProblem(
                    field: field.id, message: "\(field.label.text(language)): \(message)", suggestion: suggestion))
        }
        let limit = min(field.validation.maxLength ?? Self.maxAnswerCharacters, Self.maxAnswerCharacters)
        // Refused before any other work: a 10 MB answer costs one pass over its bytes, not a normalisation.
        if raw.utf8.count > 4 * limit + 64 {
            return problem(tooLong(limit, got: raw.utf8.count, unit: "bytes"), shortenIt)
        }
        if let bad = raw.unicodeScalars.first(where: {
            (TerminalText.isControl($0) && !["\t", "\n", "\r"].contains($0)) || TerminalText.isDirectionControl($0)
        }) {
            let code = "U+" + String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4)
            return problem(
                t(
                    "it holds a control character (\(code)); answers are plain text.",
                    "تحتوي على محرف تحكم (\(code))؛ الإجابات نص عادي.",
                    "contiene un carácter de control (\(code)); las respuestas son texto simple."),
                t("Type it again without it.", "اكتبها مرة أخرى بدونه.", "Escríbala de nuevo sin él."))
        }
        let text = collapseSpaces(westernDigits(raw))
        guard !text.isEmpty else {
            return problem(
                t("no answer given.", "لم تُكتب إجابة.", "no hay respuesta."),
                field.required
                    ? t("This field is required.", "هذا الحقل مطلوب.", "Este campo es obligatorio.")
                    : t("Type /skip to leave it empty.", "اكتب /skip لتركه فارغاً.", "Escriba /skip para dejarlo vacío.")
            )
        }
        let value: String
        switch typed(text, field) {
        case .success(let v): value = v
        case .failure(let p): return problem(p.message, p.suggestion)
        }
        let v = field.validation
        if v.latinOnly, !value.unicodeScalars.allSatisfy({ $0.isASCII && !CharacterSet.controlCharacters.contains($0) })
        {
            return problem(
                t(
                    "only Latin letters A–Z are accepted, as printed in the passport's machine-readable zone.",
                    "تُقبل الأحرف اللاتينية A–Z فقط كما في السطر المقروء آلياً من الجواز.",
                    "solo se aceptan letras latinas A–Z, como en la zona de lectura mecánica del pasaporte."),
                t(
                    "Write it without accents or other scripts (José → JOSE, محمد → MOHAMMED as in your passport).",
                    "اكتبه بالأحرف اللاتينية كما في جوازك (محمد → MOHAMMED).",
                    "Escríbalo sin acentos ni otras escrituras (José → JOSE), como en su pasaporte."))
        }
        if let n = v.minLength, value.count < n {
            return problem(
                t(
                    "at least \(n) characters are needed (got \(value.count)).",
                    "يلزم \(n) أحرف على الأقل (كُتب \(value.count)).",
                    "se necesitan al menos \(n) caracteres (hay \(value.count))."),
                t("Give the full value.", "اكتب القيمة كاملة.", "Escriba el valor completo."))
        }
        if value.count > limit {
            return problem(tooLong(limit, got: value.count, unit: "characters"), shortenIt)
        }
        if let pattern = v.pattern, value.range(of: "^(?:\(pattern))$", options: .regularExpression) == nil {
            let hint = v.patternHint?.text(language) ?? pattern
            return problem(
                t(
                    "'\(value)' is not in the expected format.", "'\(value)' ليس بالصيغة المطلوبة.",
                    "'\(value)' no tiene el formato esperado."),
                t("Expected: \(hint).", "المطلوب: \(hint).", "Se espera: \(hint)."))
        }
        if field.type == .number, let x = Double(value) {
            if let lo = v.minimum, x < lo {
                return problem(
                    t(
                        "\(value) is below the minimum \(format(lo)).", "\(value) أقل من الحد الأدنى \(format(lo)).",
                        "\(value) es menor que el mínimo \(format(lo))."),
                    t(
                        "Give a number ≥ \(format(lo)).", "اكتب رقماً ≥ \(format(lo)).",
                        "Escriba un número ≥ \(format(lo))."))
            }
            if let hi = v.maximum, x > hi {
                return problem(
                    t(
                        "\(value) is above the maximum \(format(hi)).", "\(value) أكبر من الحد الأعلى \(format(hi)).",
                        "\(value) es mayor que el máximo \(format(hi))."),
                    t(
                        "Give a number ≤ \(format(hi)).", "اكتب رقماً ≤ \(format(hi)).",
                        "Escriba un número ≤ \(format(hi))."))
            }
        }
        if field.type == .date, let limit = v.date, let d = CivilDate(iso: value) {
            if limit == .past && d >= today {
                return problem(
                    t(
                        "\(value) is not in the past (today is \(today)).",
                        "\(value) ليس تاريخاً ماضياً (اليوم \(today)).",
                        "\(value) no está en el pasado (hoy es \(today))."),
                    t("Check the year.", "تحقق من السنة.", "Revise el año."))
            }
            if limit == .future && d <= today {
                return problem(
                    t(
                        "\(value) is not in the future (today is \(today)).",
                        "\(value) ليس تاريخاً قادماً (اليوم \(today)).",
                        "\(value) no está en el futuro (hoy es \(today))."),
                    t("Check the year.", "تحقق من السنة.", "Revise el año."))
            }
        }
        return .success(value)
    }

    /// The type's own check and normal form.
    func typed(_ text: String, _ field: FormTemplate.Field) -> Result<String, AnswerProblem> {
        func bad(_ m: String, _ s: String) -> Result<String, AnswerProblem> {
            .failure(AnswerProblem(field: field.id, message: m, suggestion: s))
        }
        switch field.type {
        case .text:
            return .success(text)
        case .name:
            let ok = text.allSatisfy { $0.isLetter || $0 == " " || $0 == "-" || $0 == "'" || $0 == "." }
            guard ok, text.contains(where: \.isLetter) else {
                return bad(
                    t(
                        "'\(text)' is not a name (letters, spaces, hyphens and apostrophes only).",
                        "'\(text)' ليس اسماً (حروف ومسافات وشرطات وفواصل علوية فقط).",
                        "'\(text)' no es un nombre (solo letras, espacios, guiones y apóstrofos)."),
                    t(
                        "Type the name as written on your document.", "اكتب الاسم كما في وثيقتك.",
                        "Escriba el nombre como figura en su documento."))
            }
            return .success(field.validation.latinOnly ? text.uppercased() : text)
        case .date:
            if let p = Self.readDate(text), CivilDate(year: p.year, month: p.month, day: p.day) == nil {
                let days = (1...12).contains(p.month) ? CivilDate.daysIn(month: p.month, year: p.year) : 0
                return bad(
                    days == 0
                        ? t(
                            "'\(text)' is not a real date: there is no month \(p.month).",
                            "'\(text)' ليس تاريخاً صحيحاً: لا يوجد شهر \(p.month).",
                            "'\(text)' no es una fecha real: no existe el mes \(p.month).")
                        : t(
                            "'\(text)' is not a real date: month \(p.month) of \(p.year) has \(days) days.",
                            "'\(text)' ليس تاريخاً صحيحاً: الشهر \(p.month) من عام \(p.year) فيه \(days) يوماً.",
                            "'\(text)' no es una fecha real: el mes \(p.month) de \(p.year) tiene \(days) días."),
                    t(
                        "Check the day and the month (day/month order: 15/08/1990 or 08/15/1990).",
                        "تحقق من اليوم والشهر (15/08/1990 أو 08/15/1990).",
                        "Revise el día y el mes (15/08/1990 o 08/15/1990)."))
            }
            guard let d = Self.parseDate(text) else {
                return bad(
                    t(
                        "'\(text)' is not a date I can read.", "'\(text)' ليس تاريخاً مفهوماً.",
                        "'\(text)' no es una fecha legible."),
                    t(
                        "Use YYYY-MM-DD (1990-08-15), MM/DD/YYYY (08/15/1990), DD.MM.YYYY (15.08.1990) or 15 Aug 1990.",
                        "استخدم YYYY-MM-DD (1990-08-15) أو MM/DD/YYYY أو DD.MM.YYYY (15.08.1990).",
                        "Use AAAA-MM-DD (1990-08-15), DD.MM.AAAA (15.08.1990) o 15 de agosto de 1990."))
            }
            return .success(d.description)
        case .email:
            let ok =
                text.range(
                    of: "^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}$",
                    options: .regularExpression) != nil
            return ok
                ? .success(text.lowercased())
                : bad(
                    t(
                        "'\(text)' is not an e-mail address.", "'\(text)' ليس بريداً إلكترونياً.",
                        "'\(text)' no es un correo electrónico."),
                    t(
                        "Use the form name@example.com.", "استخدم الصيغة name@example.com.",
                        "Use la forma nombre@example.com."))
        case .phone:
            let allowed = CharacterSet(charactersIn: "0123456789+()-. ")
            let digits = text.filter(\.isNumber)
            guard text.unicodeScalars.allSatisfy(allowed.contains), !text.dropFirst().contains("+"),
                (7...15).contains(digits.count)
            else {
                return bad(
                    t(
                        "'\(text)' is not a telephone number (7 to 15 digits).",
                        "'\(text)' ليس رقم هاتف (من 7 إلى 15 رقماً).",
                        "'\(text)' no es un número de teléfono (de 7 a 15 dígitos)."),
                    t(
                        "Use digits with an optional leading +, e.g. +1 555 123 4567.",
                        "استخدم الأرقام مع + اختيارية في البداية، مثل +966 50 123 4567.",
                        "Use dígitos con un + inicial opcional, p. ej. +34 612 345 678."))
            }
            return .success((text.hasPrefix("+") ? "+" : "") + digits)
        case .zip:
            let ok = text.range(of: "^[0-9]{5}(-[0-9]{4})?$", options: .regularExpression) != nil
            return ok
                ? .success(text)
                : bad(
                    t(
                        "'\(text)' is not a US ZIP code.", "'\(text)' ليس رمزاً بريدياً أمريكياً.",
                        "'\(text)' no es un código postal de EE. UU."),
                    t(
                        "Use 5 digits (90210) or ZIP+4 (90210-1234).", "استخدم 5 أرقام (90210) أو ZIP+4 (90210-1234).",
                        "Use 5 dígitos (90210) o ZIP+4 (90210-1234)."))
        case .usState:
            guard let code = USStates.code(text) else {
                return bad(
                    t(
                        "'\(text)' is not a US state.", "'\(text)' ليست ولاية أمريكية.",
                        "'\(text)' no es un estado de EE. UU."),
                    t(
                        "Use the state's name or two-letter code (California or CA).",
                        "استخدم اسم الولاية أو رمزها من حرفين (California أو CA).",
                        "Use el nombre del estado o su código de dos letras (California o CA)."))
            }
            return .success(code)
        case .country:
            let table: Countries
            switch Countries.shipped {
            case .success(let t): table = t
            case .failure(let error): return bad("\(error)", t("Rebuild sanad.", "أعد بناء sanad.", "Recompile sanad."))
            }
            guard let code = table.code(text) else {
                return bad(
                    t(
                        "'\(text)' is not a country code or name I know (ISO 3166-1).",
                        "'\(text)' ليس رمز دولة أو اسمها المعروف (ISO 3166-1).",
                        "'\(text)' no es un código ni un nombre de país que conozca (ISO 3166-1)."),
                    t(
                        "Use the 3-letter code in the passport (SWE, EGY, MEX) or the country's name (Sweden).",
                        "استخدم الرمز الثلاثي المكتوب في الجواز (SAU، EGY) أو اسم الدولة (السعودية).",
                        "Use el código de 3 letras del pasaporte (SWE, EGY, MEX) o el nombre del país (Suecia)."))
            }
            return .success(code)
        case .yesNo:
            let word = text.lowercased().trimmingCharacters(in: .punctuationCharacters)
            if Self.yesWords.contains(word) { return .success("yes") }
            if Self.noWords.contains(word) { return .success("no") }
            return bad(
                t("'\(text)' is not yes or no.", "'\(text)' ليست نعم أو لا.", "'\(text)' no es sí o no."),
                t("Answer yes or no (نعم / لا, sí / no).", "أجب بنعم أو لا.", "Responda sí o no."))
        case .select:
            let lower = text.lowercased()
            if let n = Int(text), n >= 1, n <= field.options.count { return .success(field.options[n - 1].value) }
            if let o = field.options.first(where: {
                $0.value.lowercased() == lower || $0.label.values.values.contains { $0.lowercased() == lower }
            }) {
                return .success(o.value)
            }
            let choices = field.options.enumerated().map { "\($0.offset + 1)) \($0.element.label.text(language))" }
            return bad(
                t(
                    "'\(text)' is not one of the choices.", "'\(text)' ليس من الخيارات.",
                    "'\(text)' no es una de las opciones."),
                t("Choose one of: ", "اختر واحداً من: ", "Elija una de: ") + choices.joined(separator: ", ") + ".")
        case .number:
            guard let x = Double(text.replacingOccurrences(of: ",", with: "")), x.isFinite else {
                return bad(
                    t("'\(text)' is not a number.", "'\(text)' ليس رقماً.", "'\(text)' no es un número."),
                    t(
                        "Type digits only, e.g. 42 or 3.5.", "اكتب أرقاماً فقط، مثل 42 أو 3.5.",
                        "Escriba solo dígitos, p. ej. 42 o 3.5."))
            }
            return .success(format(x))
        case .passportNumber:
            let compact = text.uppercased().filter { $0 != " " }
            let ok = compact.range(of: "^[A-Z0-9]{6,9}$", options: .regularExpression) != nil
            return ok
                ? .success(compact)
                : bad(
                    t(
                        "'\(text)' is not a passport number (6 to 9 letters and digits).",
                        "'\(text)' ليس رقم جواز (من 6 إلى 9 حروف وأرقام).",
                        "'\(text)' no es un número de pasaporte (de 6 a 9 letras y dígitos)."),
                    t(
                        "Copy it from the passport's data page, without spaces or dashes.",
                        "انسخه من صفحة بيانات الجواز بلا مسافات أو شرطات.",
                        "Cópielo de la página de datos del pasaporte, sin espacios ni guiones."))
        case .address:
            guard text.count >= 5, text.contains(where: \.isNumber), text.contains(where: \.isLetter) else {
                return bad(
                    t("'\(text)' is not a street address.", "'\(text)' ليس عنواناً.", "'\(text)' no es una dirección."),
                    t(
                        "Give the house number and street, e.g. 1200 Main Street, Apt 4.",
                        "اكتب رقم المبنى والشارع، مثل 1200 Main Street.",
                        "Indique el número y la calle, p. ej. 1200 Main Street, Apt 4."))
            }
            return .success(text)
        }
    }

    func format(_ x: Double) -> String {
        x.rounded() == x && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }

    // MARK: Dates

    static let monthNames: [String: Int] = {
        var out: [String: Int] = [:]
        let english = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let full = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december",
        ]
        let spanish = [
            "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
            "noviembre", "diciembre",
        ]
        for i in 0..<12 {
            out[english[i]] = i + 1
            out[full[i]] = i + 1
            out[spanish[i]] = i + 1
        }
        out["sept"] = 9
        return out
    }()

    /// A date in a common format: `1990-08-15`, `1990/08/15`, `08/15/1990` or `08-15-1990` (US order; `15/08/1990` when the first
    /// number cannot be a month), `15.08.1990`, `15 Aug 1990`, `Aug 15, 1990`, `15 de agosto de 1990`.
    public static func parseDate(_ text: String) -> CivilDate? {
        readDate(text).flatMap { CivilDate(year: $0.year, month: $0.month, day: $0.day) }
    }

    /// The year, month and day a date answer is written with (four-digit year), whether or not they make a real
    /// date (`31/02/1985` reads as 1985, 2, 31); nil when the text is not written like a date.
    static func readDate(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let t = text.lowercased().replacingOccurrences(of: ",", with: " ").replacingOccurrences(of: " de ", with: " ")
        let numbers = t.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        let words = t.split(whereSeparator: { !$0.isLetter }).map(String.init)
        let separators = t.filter { !$0.isNumber && !$0.isLetter && $0 != " " }
        func parts(_ year: Int, _ month: Int, _ day: Int) -> (year: Int, month: Int, day: Int)? {
            (1000...9999).contains(year) && (1...31).contains(day) ? (year, month, day) : nil
        }
        if words.isEmpty, numbers.count == 3, Set(separators).count == 1 {
            let pieces = t.split(whereSeparator: { !$0.isNumber })
            guard pieces.allSatisfy({ $0.count <= 4 }) else { return nil }
            let (a, b, c) = (numbers[0], numbers[1], numbers[2])
            if pieces[0].count == 4 { return parts(a, b, c) }
            guard pieces[2].count == 4 else { return nil }
            if separators.first == "." { return parts(c, b, a) }
            return a > 12 ? parts(c, b, a) : parts(c, a, b)
        }
        guard words.count == 1, numbers.count == 2, let month = monthNames[words[0]] else { return nil }
        let year = numbers.first { $0 >= 1000 }
        let day = numbers.first { $0 < 1000 }
        guard let year, let day else { return nil }
        return parts(year, month, day)
    }
}

/// Arabic-Indic and Eastern Arabic-Indic digits as ASCII digits (`١٩٩٠` → `1990`).
func westernDigits(_ text: String) -> String {
    String(
        String.UnicodeScalarView(
            text.unicodeScalars.map { s in
                switch s.value {
                case 0x0660...0x0669: return Unicode.Scalar(s.value - 0x0660 + 0x30) ?? s
                case 0x06F0...0x06F9: return Unicode.Scalar(s.value - 0x06F0 + 0x30) ?? s
                default: return s
                }
            }))
}

/// Trimmed, with each run of white space as one space.
func collapseSpaces(_ text: String) -> String {
    text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

extension String {
    /// Zeros in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
