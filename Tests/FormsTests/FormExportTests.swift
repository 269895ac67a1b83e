import FormsPlugin
import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// The export files: the PDF writer's structure (every cross-reference offset, stream length and page), the PDFs
/// read back by poppler's `pdftotext`, and the `.ics` reminder's RFC 5545 form.
@Suite("form exports")
struct FormExportTests {
    static let pdftotext = ["/usr/bin/pdftotext", "/usr/local/bin/pdftotext"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Checks a PDF's skeleton: header, each xref entry points at its `N 0 obj`, startxref at `xref`, each stream's
    /// /Length equals its bytes. Returns the number of pages. Works on bytes: an embedded font's binary may hold any.
    static func checkStructure(_ pdf: [UInt8]) throws -> Int {
        func find(_ needle: String, from: Int = 0, backwards: Bool = false) -> Int? {
            let n = Array(needle.utf8)
            guard pdf.count >= n.count, from <= pdf.count - n.count else { return nil }
            let starts = Array(from...(pdf.count - n.count))
            return (backwards ? starts.reversed() : starts).first { pdf[$0..<($0 + n.count)].elementsEqual(n) }
        }
        func starts(_ prefix: String, at i: Int) -> Bool { pdf[i...].starts(with: Array(prefix.utf8)) }
        func number(at i: Int) -> Int? {
            Int(String(decoding: pdf[i...].prefix { (48...57).contains($0) }, as: UTF8.self))
        }
        #expect(starts("%PDF-1.4\n", at: 0) && pdf.suffix(6).elementsEqual(Array("%%EOF\n".utf8)))
        let startxref = try #require(find("startxref\n", backwards: true))
        let xrefOffset = try #require(number(at: startxref + 10))
        #expect(starts("xref\n0 ", at: xrefOffset))
        let table = String(decoding: pdf[xrefOffset...], as: UTF8.self).split(separator: "\n")
        let count = try #require(Int(table[1].split(separator: " ")[1]))
        for n in 1..<count {
            let entry = table[2 + n]
            #expect(entry.count == 19 && entry.hasSuffix(" 00000 n "), "\(entry)")
            let offset = try #require(Int(entry.prefix(10)))
            #expect(starts("\(n) 0 obj\n", at: offset), "object \(n)")
        }
        var search = 0
        while let length = find("<< /Length ", from: search) {
            let n = try #require(number(at: length + 11))
            let body = try #require(find(">>\nstream\n", from: length)) + 10
            #expect(
                starts("endstream", at: body + n) || starts("\nendstream", at: body + n),
                "a stream's /Length is its byte count")
            search = body + n
        }
        let latin = String(decoding: pdf.filter { $0 < 0x80 }, as: UTF8.self)
        let pages = latin.components(separatedBy: "/Type /Page ").count - 1
        #expect(latin.contains("/Count \(pages) >>"))
        return pages
    }

    static func pdfText(_ pdf: [UInt8]) throws -> String? {
        guard let tool = pdftotext else { return nil }
        let file = FormsFixture.temporaryDirectory().appendingPathComponent("f.pdf")
        try Data(pdf).write(to: file)
        let r = try runChildProcess(URL(fileURLWithPath: tool), [file.path, "-"])
        #expect(r.status == 0, "\(String(decoding: r.stderr, as: UTF8.self))")
        return String(decoding: r.stdout, as: UTF8.self)
    }

    @Test("a long document: valid cross references, several pages, wrapped lines, escapes; pdftotext reads it all")
    func pdfWriter() throws {
        for fonts in [TextPDF.Fonts.system, .courier] { try stress(fonts) }
    }

    func stress(_ fonts: TextPDF.Fonts) throws {
        var lines: [TextPDF.Line] = [.init(.title, "Stress (test) \\ document"), .init(.heading, "Section")]
        for i in 0..<130 { lines.append(.init(.body, "line \(i): café – “quoted” € (paren) back\\slash")) }
        let long = (0..<40).map { "word\($0)" }.joined(separator: " ")
        lines.append(.init(.body, long))
        lines.append(.init(.body, String(repeating: "x", count: 200)))
        let output = TextPDF(title: "Stress (test) \\ document", lines: lines).render(fonts: fonts)
        let pdf = output.bytes
        #expect(output.unrepresentable == 0 && output.note == nil)
        #expect(try Self.checkStructure(pdf) == 3)
        guard let text = try Self.pdfText(pdf) else { return }
        for i in [0, 64, 129] {
            #expect(text.contains("line \(i): café – “quoted” € (paren) back\\slash"), "line \(i)")
        }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        #expect((0..<40).allSatisfy { words.contains("word\($0)") }, "a wrapped line keeps every word")
        #expect(text.contains("page 3 of 3"))
    }

    @Test("characters outside the PDF font are counted, never dropped silently")
    func unrepresentable() throws {
        let courier = TextPDF(title: "t", lines: [.init(.body, "اسم Name")]).render(fonts: .courier)
        #expect(courier.unrepresentable == 3 && Self.text(courier.bytes).contains("(??? Name)"))
        let embedded = TextPDF(title: "t", lines: [.init(.body, "اسم Name 漢字")]).render()
        #expect(embedded.unrepresentable == 2 && embedded.note == nil, "DejaVu Sans has Arabic, not Han")
    }

    @Test("a finished DMV renewal exports PDFs whose text has every answer and checklist item, and an .ics reminder")
    func dmvExport() throws {
        var s = try FormsFixture.session("dmv-renewal", language: "es")
        try FormsFixture.answer(&s, FormsFixture.dmvAnswers)
        let docs = FormDocuments(s)
        #expect(
            docs.files.map(\.name) == [
                "answers.json", "form.txt", "checklist.txt", "form.pdf", "checklist.pdf", "form-en.pdf",
                "reminder-appointmentDate.ics",
            ])
        #expect(docs.notes.isEmpty, "\(docs.notes)")
        let files = Dictionary(docs.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        let form = try #require(files["form.pdf"])
        let checklist = try #require(files["checklist.pdf"])
        let official = try #require(files["form-en.pdf"])
        #expect(try Self.checkStructure(form) >= 1 && Self.checkStructure(checklist) >= 1)
        #expect(try Self.checkStructure(official) >= 1)
        // The text files and the PDFs are in the session's language (Spanish); form-en.pdf is the official form's.
        #expect(Self.text(files["form.txt"] ?? []).contains("Fecha de nacimiento: 1985-04-23"))
        let spanish = FormReview(s)
        let english = FormReview(try #require(s.shown(in: "en")))
        for (pdf, review, total) in [(form, spanish, "Total: 47.00"), (official, english, "Total: 47.00")] {
            guard let text = try Self.pdfText(pdf) else { break }
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for e in review.entries {
                let line = "\(e.label): \(e.shown ?? "")".split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(flat.contains(line), "the \(review.language) form lacks '\(line)'")
            }
            #expect(flat.contains(total))
        }
        if let text = try Self.pdfText(checklist) {
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains("lista de comprobación"))
            for item in spanish.checklist.flatMap(\.items) {
                let words = item.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(flat.contains(words), "checklist.pdf lacks '\(words)'")
            }
        }
        let ics = Self.text(try #require(files["reminder-appointmentDate.ics"]))
        #expect(ics.contains("DTSTART;VALUE=DATE:20261215\r\n") && ics.contains("TRIGGER;RELATED=START:-P1D\r\n"))
        #expect(ics.contains("SUMMARY:Cita en el DMV: renovación de licencia\r\n"))
    }

    @Test("the .ics file: CRLF lines of at most 75 octets, folded inside no character, text escaped")
    func icalendar() throws {
        let summary = String(repeating: "موعد مكتب; إدارة, المركبات ", count: 6)
        let description = "Line one\nLine two, with \\ and ; — " + String(repeating: "é", count: 100)
        let event = ICalendarReminder(
            uid: "s-1-appointmentDate@sanad", date: CivilDate(year: 2027, month: 3, day: 1)!, summary: summary,
            description: description, alarmDaysBefore: 14)
        let ics = event.render(stamp: Date(timeIntervalSince1970: 1_795_000_000))
        #expect(ics.hasSuffix("END:VCALENDAR\r\n") && !ics.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        let physical = ics.components(separatedBy: "\r\n").dropLast()
        for line in physical { #expect(line.utf8.count <= 75, "\(line.utf8.count) octets: \(line)") }
        let unfolded = ics.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
        func unescape(_ s: Substring) -> String {
            var out = ""
            var escape = false
            for ch in s {
                if escape {
                    out.append(ch == "n" ? "\n" : ch)
                    escape = false
                } else if ch == "\\" {
                    escape = true
                } else {
                    out.append(ch)
                }
            }
            return out
        }
        let values = Dictionary(
            unfolded.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), unescape(line[line.index(after: colon)...]))
            }, uniquingKeysWith: { a, _ in a })
        #expect(values["SUMMARY"] == summary && values["DESCRIPTION"] == description)
        #expect(values["DTSTART;VALUE=DATE"] == "20270301" && values["TRIGGER;RELATED=START"] == "-P14D")
        #expect(values["DTSTAMP"] == "20261118T110640Z" && values["UID"] == "s-1-appointmentDate@sanad")
    }

    @Test("a reminder on a field that is not a date is refused, naming the key")
    func reminderOnText() throws {
        var t = try JSONValue.parse(
            try Data(
                contentsOf: try FormsFixture.catalog().directory.appendingPathComponent("ds-160.form.json")))
        guard case .object(var top) = t, case .object(var review)? = top["review"],
            case .array(var reminders)? = review["reminders"], case .object(var first)? = reminders.first
        else {
            Issue.record("the DS-160 template has a reminder")
            return
        }
        first["fieldId"] = .string("surname")
        reminders[0] = .object(first)
        review["reminders"] = .array(reminders)
        top["review"] = .object(review)
        t = .object(top)
        let dir = FormsFixture.temporaryDirectory()
        try Data(t.prettyString.utf8).write(to: dir.appendingPathComponent("ds-160.form.json"))
        let shipped = try #require(FormCatalog.bundledDirectory).appendingPathComponent("sixMonthClub.json")
        try FileManager.default.copyItem(at: shipped, to: dir.appendingPathComponent("sixMonthClub.json"))
        #expect {
            _ = try FormCatalog(directory: dir).template("ds-160")
        } throws: { error in
            "\(error)".contains("review.reminders[0].fieldId") && "\(error)".contains("not a date field")
        }
    }
}
