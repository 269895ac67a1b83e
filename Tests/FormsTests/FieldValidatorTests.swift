import FormsPlugin
import SanadCore
import Testing

/// A table of answers per field type: valid (with the normal form), invalid, edge.
@Suite("field validation")
struct FieldValidatorTests {
    static let validator = FieldValidator(today: FormsFixture.today)

    static func field(
        _ type: FieldType, options: [String] = [], validation: FieldValidation = .none, required: Bool = true
    ) -> FormTemplate.Field {
        let t = LocalizedText(["en": "F"])
        return FormTemplate.Field(
            id: "f", label: t, type: type, required: required,
            options: options.map {
                FormTemplate.Option(value: $0, label: LocalizedText(["en": $0.capitalized, "ar": "خيار \($0)"]))
            },
            validation: validation, aiPrompt: t)
    }

    /// (type, input, expected normal form or nil when refused)
    static let cases: [(FieldType, String, String?)] = [
        (.text, "  hello   world ", "hello world"), (.text, "   ", nil),
        (.name, "Anne-Marie O'Neil", "Anne-Marie O'Neil"), (.name, "محمد علي", "محمد علي"), (.name, "R2D2", nil),
        (.date, "1990-08-15", "1990-08-15"), (.date, "1990/08/15", "1990-08-15"), (.date, "08/15/1990", "1990-08-15"),
        (.date, "15/08/1990", "1990-08-15"), (.date, "15.08.1990", "1990-08-15"), (.date, "15 Aug 1990", "1990-08-15"),
        (.date, "August 15, 1990", "1990-08-15"), (.date, "15 de agosto de 1990", "1990-08-15"),
        (.date, "١٩٩٠-٠٨-١٥", "1990-08-15"), (.date, "2023-02-29", nil), (.date, "2024-02-29", "2024-02-29"),
        (.date, "13/13/1990", nil), (.date, "yesterday", nil), (.date, "1990-8-15", "1990-08-15"),
        (.email, "Maria@Example.COM", "maria@example.com"), (.email, "maria@example", nil), (.email, "a b@c.de", nil),
        (.phone, "+1 (916) 555-0100", "+19165550100"), (.phone, "0501234567", "0501234567"), (.phone, "12345", nil),
        (.phone, "+1 555 +12", nil), (.phone, "call me", nil),
        (.zip, "95814", "95814"), (.zip, "95814-1234", "95814-1234"), (.zip, "9581", nil), (.zip, "95814-12", nil),
        (.usState, "ca", "CA"), (.usState, "new  york", "NY"), (.usState, "District of Columbia", "DC"),
        (.usState, "Ontario", nil), (.usState, "XX", nil),
        (.yesNo, "Yes", "yes"), (.yesNo, "نعم", "yes"), (.yesNo, "sí", "yes"), (.yesNo, "si", "yes"),
        (.yesNo, "NO.", "no"),
        (.yesNo, "لا", "no"), (.yesNo, "maybe", nil),
        (.number, "42", "42"), (.number, "3.50", "3.5"), (.number, "1,200", "1200"), (.number, "ten", nil),
        (.passportNumber, "l898902c3", "L898902C3"), (.passportNumber, "AB 12 34 56", "AB123456"),
        (.passportNumber, "12345", nil), (.passportNumber, "AB-123456", nil), (.passportNumber, "1234567890", nil),
        (.address, "1200 Main Street, Apt 4", "1200 Main Street, Apt 4"), (.address, "Main Street", nil),
        (.address, "12", nil),
        (.country, "sau", "SAU"), (.country, "SWE", "SWE"), (.country, "se", "SWE"), (.country, "Saudi Arabia", "SAU"),
        (.country, "السعودية", "SAU"), (.country, "المملكة العربية السعودية", "SAU"), (.country, "Suecia", "SWE"),
        (.country, "united states of america", "USA"), (.country, "Egipto", "EGY"), (.country, "مصر", "EGY"),
        (.country, "D", "DEU"), (.country, "México", "MEX"), (.country, "XYZ", nil), (.country, "UTO", nil),
        (.country, "Narnia", nil),
    ]

    @Test("each type accepts, normalises and refuses as the table says")
    func table() {
        for (type, input, expected) in Self.cases {
            let result = Self.validator.normalize(input, for: Self.field(type))
            switch (result, expected) {
            case (.success(let v), let e?): #expect(v == e, "\(type) '\(input)'")
            case (.failure(let p), nil):
                #expect(!p.message.isEmpty && !p.suggestion.isEmpty, "\(type) '\(input)'")
                #expect(p.message.hasPrefix("F: "), "the message names the field: \(p.message)")
            default: Issue.record("\(type) '\(input)': got \(result), expected \(expected ?? "a refusal")")
            }
        }
    }

    @Test("every country of the table is found by its code and by its name in each language, and by no other's")
    func countries() throws {
        let table = try Countries.shipped.get()
        #expect(table.countries.count == 249 && table.asOf.hasPrefix("iso-codes "))
        for (code, country) in table.countries {
            #expect(table.code(code.lowercased()) == code)
            for (language, name) in country.names { #expect(table.code(name) == code, "\(code) \(language) \(name)") }
        }
    }

    @Test("select takes the value, a label in any language, or the option number")
    func select() throws {
        let f = Self.field(.select, options: ["card", "cash"])
        for (input, value) in [("card", "card"), ("CASH", "cash"), ("2", "cash"), ("خيار card", "card")] {
            #expect(try Self.validator.normalize(input, for: f).get() == value, "\(input)")
        }
        for input in ["3", "0", "cheque"] {
            guard case .failure(let p) = Self.validator.normalize(input, for: f) else {
                Issue.record("\(input) accepted")
                continue
            }
            #expect(p.suggestion.contains("1) Card") && p.suggestion.contains("2) Cash"), "\(p)")
        }
    }

    @Test("validation limits: length, pattern, range, past and future dates, Latin letters only")
    func limits() throws {
        func ok(_ f: FormTemplate.Field, _ s: String) -> Bool {
            if case .success = Self.validator.normalize(s, for: f) { return true }
            return false
        }
        let length = Self.field(.text, validation: FieldValidation(minLength: 2, maxLength: 4, latinOnly: false))
        #expect(!ok(length, "a") && ok(length, "ab") && ok(length, "abcd") && !ok(length, "abcde"))
        let pattern = Self.field(
            .text,
            validation: FieldValidation(
                pattern: "[A-Z]{3}", patternHint: LocalizedText(["en": "3 capitals"]), latinOnly: false))
        #expect(ok(pattern, "USA") && !ok(pattern, "US") && !ok(pattern, "USAX") && !ok(pattern, "usa"))
        if case .failure(let p) = Self.validator.normalize("US", for: pattern) {
            #expect(p.suggestion.contains("3 capitals"))
        }
        let range = Self.field(.number, validation: FieldValidation(minimum: 1, maximum: 10, latinOnly: false))
        #expect(!ok(range, "0") && ok(range, "1") && ok(range, "10") && !ok(range, "10.5"))
        let past = Self.field(.date, validation: FieldValidation(date: .past, latinOnly: false))
        #expect(ok(past, "2026-11-23") && !ok(past, "2026-11-24") && !ok(past, "2030-01-01"))
        let future = Self.field(.date, validation: FieldValidation(date: .future, latinOnly: false))
        #expect(ok(future, "2026-11-25") && !ok(future, "2026-11-24"))
        let latin = Self.field(.name, validation: FieldValidation(latinOnly: true))
        #expect(try Self.validator.normalize("Eriksson", for: latin).get() == "ERIKSSON")
        #expect(!ok(latin, "José") && !ok(latin, "محمد"))
        #expect(!ok(Self.field(.text), ""))
        if case .failure(let p) = Self.validator.normalize(" ", for: Self.field(.text, required: false)) {
            #expect(p.suggestion.contains("/skip"))
        }
    }

    @Test("messages and fixes are in the session's language")
    func languages() {
        let zip = Self.field(.zip)
        let expected = ["en": "is not a US ZIP code", "ar": "ليس رمزاً بريدياً أمريكياً", "es": "no es un código postal"]
        for (language, words) in expected {
            let v = FieldValidator(today: FormsFixture.today, language: language)
            guard case .failure(let p) = v.normalize("123", for: zip) else {
                Issue.record("\(language): 123 accepted")
                continue
            }
            #expect(p.message.contains(words), "\(language): \(p.message)")
        }
    }
}
