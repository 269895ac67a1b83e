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
    /// /Length equals its bytes. Returns the number of pages.
    static func checkStructure(_ pdf: [UInt8]) throws -> Int {
        let latin = String(pdf.map { Character(Unicode.Scalar($0)) })
        #expect(latin.hasPrefix("%PDF-1.4\n") && latin.hasSuffix("%%EOF\n"))
        let startxref = try #require(latin.range(of: "startxref\n", options: .backwards))
        let xrefOffset = try #require(Int(latin[startxref.upperBound...].prefix { $0.isNumber }))
        let xrefStart = latin.index(latin.startIndex, offsetBy: xrefOffset)
        #expect(latin[xrefStart...].hasPrefix("xref\n0 "))
        let table = latin[xrefStart...].split(separator: "\n")
        let count = try #require(Int(table[1].split(separator: " ")[1]))
        for n in 1..<count {
            let entry = table[2 + n]
            #expect(entry.count == 19 && entry.hasSuffix(" 00000 n "), "\(entry)")
            let offset = try #require(Int(entry.prefix(10)))
            #expect(latin[latin.index(latin.startIndex, offsetBy: offset)...].hasPrefix("\(n) 0 obj\n"), "object \(n)")
        }
        var search = latin.startIndex..<latin.endIndex
        while let length = latin.range(of: "<< /Length ", range: search) {
            let n = try #require(Int(latin[length.upperBound...].prefix { $0.isNumber }))
            let body = try #require(latin.range(of: ">>\nstream\n", range: length.upperBound..<latin.endIndex))
            let end = latin.index(body.upperBound, offsetBy: n)
            #expect(latin[end...].hasPrefix("endstream"), "a stream's /Length is its byte count")
            search = end..<latin.endIndex
        }
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
        var lines: [TextPDF.Line] = [.init(.title, "Stress (test) \\ document"), .init(.heading, "Section")]
        for i in 0..<130 { lines.append(.init(.body, "line \(i): café – “quoted” € (paren) back\\slash")) }
        let long = (0..<40).map { "word\($0)" }.joined(separator: " ")
        lines.append(.init(.body, long))
        lines.append(.init(.body, String(repeating: "x", count: 200)))
        let (pdf, lost) = TextPDF(title: "Stress (test) \\ document", lines: lines).render()
        #expect(lost == 0)
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
        let (pdf, lost) = TextPDF(title: "t", lines: [.init(.body, "اسم Name")]).render()
        #expect(lost == 3 && Self.text(pdf).contains("(??? Name)"))
    }

    @Test("a finished DMV renewal exports PDFs whose text has every answer and checklist item, and an .ics reminder")
    func dmvExport() throws {
        var s = try FormsFixture.session("dmv-renewal", language: "es")
        try FormsFixture.answer(&s, FormsFixture.dmvAnswers)
        let docs = FormDocuments(s)
        #expect(
            docs.files.map(\.name) == [
                "answers.json", "form.txt", "checklist.txt", "form.pdf", "checklist.pdf",
                "reminder-appointmentDate.ics",
            ])
        #expect(docs.notes.isEmpty, "\(docs.notes)")
        let files = Dictionary(docs.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        let form = try #require(files["form.pdf"])
        let checklist = try #require(files["checklist.pdf"])
        #expect(try Self.checkStructure(form) >= 1 && Self.checkStructure(checklist) >= 1)
        // The text files are in the session's language (Spanish); the PDFs are the official form, in English.
        #expect(Self.text(files["form.txt"] ?? []).contains("Fecha de nacimiento: 1985-04-23"))
        let english = FormReview(try #require(s.shown(in: "en")))
        if let text = try Self.pdfText(form) {
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for e in english.entries {
                let line = "\(e.label): \(e.shown ?? "")".split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(flat.contains(line), "form.pdf lacks '\(line)'")
            }
            #expect(flat.contains("Total: 47.00"))
        }
        if let text = try Self.pdfText(checklist) {
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for item in english.checklist.flatMap(\.items) {
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
