import Foundation
import SanadCore
import SanadTestSupport
import Testing

@testable import FormsPlugin

/// PDFs in any script: an Arabic session's form and checklist read back in Arabic by `pdftotext`, and its rendered
/// page (`pdftoppm`) shows Arabic letters joined and right to left; without HarfBuzz or the font, one clear note.
@Suite("form exports in any script")
struct FormPDFScriptTests {
    static let pdftoppm = ["/usr/bin/pdftoppm", "/usr/local/bin/pdftoppm"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A DMV renewal answered in Arabic, the names written in Arabic letters.
    static func arabicSession() throws -> FormSession {
        let store = try JSONFormStore(file: FormsFixture.temporaryDirectory().appendingPathComponent("forms.json"))
        var s = try FormSession.start(
            template: try FormsFixture.catalog().template("dmv-renewal"), store: store, language: "ar",
            id: "dmv-ar-1", today: FormsFixture.today)  // a fixed id: the committed screenshot stays the same
        let names = ["Maria Lopez": "ماريا لوبيز", "Maria Garcia": "ماريا غارسيا"]
        try FormsFixture.answer(&s, FormsFixture.dmvAnswers.map { names[$0] ?? $0 })
        return s
    }

    /// `text` as words separated by single spaces, without the direction marks pdftotext writes around runs
    /// (U+202A–U+202E) nor the neutral punctuation whose place is poppler's choice in mixed-direction lines.
    static func words(_ text: String) -> String {
        let spaced = text.unicodeScalars.map { (0x202A...0x202E).contains($0.value) ? " " : $0 }
        return String(String.UnicodeScalarView(spaced)).split { $0.isWhitespace || ":()[]+".contains($0) }
            .joined(separator: " ")
    }

    /// A grey-scale page (pdftoppm's PGM): ink is a pixel darker than mid-grey.
    struct Page {
        var width: Int
        var height: Int
        var pixels: [UInt8]

        init(pgm: [UInt8]) throws {
            // "P5\nW H\n255\n" then one byte a pixel.
            var fields: [Int] = []
            var i = 2
            while fields.count < 3 {
                while pgm[i] == 0x20 || pgm[i] == 0x0A { i += 1 }
                var n = 0
                while (48...57).contains(pgm[i]) {
                    n = n * 10 + Int(pgm[i] - 48)
                    i += 1
                }
                fields.append(n)
            }
            width = fields[0]
            height = fields[1]
            pixels = Array(pgm[(i + 1)...])
            #expect(pgm.starts(with: Array("P5".utf8)) && pixels.count == width * height)
        }

        func ink(_ x: Int, _ y: Int) -> Bool { pixels[y * width + x] < 128 }

        /// The separate shapes of ink (8-connected) in the top half of the page, each as its pixels' extent.
        func shapes() -> [(minX: Int, maxX: Int, minY: Int, maxY: Int)] {
            var seen = [Bool](repeating: false, count: width * height)
            var found: [(minX: Int, maxX: Int, minY: Int, maxY: Int)] = []
            for y in 0..<(height / 2) {
                for x in 0..<width where ink(x, y) && !seen[y * width + x] {
                    var box = (minX: x, maxX: x, minY: y, maxY: y)
                    var stack = [(x, y)]
                    seen[y * width + x] = true
                    while let (px, py) = stack.popLast() {
                        box = (min(box.minX, px), max(box.maxX, px), min(box.minY, py), max(box.maxY, py))
                        for dy in -1...1 {
                            for dx in -1...1 {
                                let (nx, ny) = (px + dx, py + dy)
                                guard nx >= 0, ny >= 0, nx < width, ny < height / 2, ink(nx, ny),
                                    !seen[ny * width + nx]
                                else { continue }
                                seen[ny * width + nx] = true
                                stack.append((nx, ny))
                            }
                        }
                    }
                    found.append(box)
                }
            }
            return found
        }
    }

    /// Page 1 of `pdf` rendered by pdftoppm at `dpi` as PGM, and as PNG at `png` when given; nil without pdftoppm.
    static func render(_ pdf: [UInt8], dpi: Int = 100, png: URL? = nil) throws -> Page? {
        guard let tool = pdftoppm else { return nil }
        let dir = FormsFixture.temporaryDirectory()
        let file = dir.appendingPathComponent("page.pdf")
        try Data(pdf).write(to: file)
        let r = try runChildProcess(
            URL(fileURLWithPath: tool),
            [
                "-gray", "-r", "\(dpi)", "-f", "1", "-l", "1", "-singlefile", file.path,
                dir.appendingPathComponent("page").path,
            ])
        #expect(r.status == 0, "\(String(decoding: r.stderr, as: UTF8.self))")
        if let png {
            let p = try runChildProcess(
                URL(fileURLWithPath: tool),
                [
                    "-png", "-r", "\(dpi)", "-f", "1", "-l", "1", "-singlefile", file.path,
                    png.deletingPathExtension().path,
                ])
            #expect(p.status == 0, "\(String(decoding: p.stderr, as: UTF8.self))")
        }
        return try Page(pgm: [UInt8](try Data(contentsOf: dir.appendingPathComponent("page.pgm"))))
    }

    @Test("an Arabic session's form.pdf and checklist.pdf read back in Arabic, labels and checklist included")
    func arabicReadsBack() throws {
        let s = try Self.arabicSession()
        let docs = FormDocuments(s)
        #expect(docs.notes.isEmpty, "\(docs.notes)")
        let files = Dictionary(docs.files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        #expect(files["form-en.pdf"] != nil, "the official form's language is English: an English copy too")
        let form = try #require(files["form.pdf"])
        let checklist = try #require(files["checklist.pdf"])
        #expect(try FormExportTests.checkStructure(form) >= 1 && FormExportTests.checkStructure(checklist) >= 1)
        let latin = String(decoding: form.filter { $0 < 0x80 }, as: UTF8.self)
        #expect(latin.contains("/Subtype /CIDFontType2") && latin.contains("/Encoding /Identity-H"))
        #expect(latin.contains("/FontFile2 ") && latin.contains("/ToUnicode ") && latin.contains("+DejaVuSans"))
        #expect(latin.contains("/Filter /FlateDecode"), "streams deflated with zlib")
        let review = FormReview(s)
        guard let text = try FormExportTests.pdfText(form) else { return }
        let flat = Self.words(text)
        #expect(!text.contains("?"), "no character lost: \(flat.prefix(300))")
        #expect(flat.contains("ماريا لوبيز") && flat.contains("المجموع 47.00"), "\(flat.prefix(400))")
        for e in review.entries {
            let label = Self.words(e.label)
            let value = Self.words(e.shown ?? "")
            if !value.unicodeScalars.contains(where: {
                $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0)
            }) {
                #expect(flat.contains("\(label) \(value)"), "form.pdf lacks '\(label) \(value)' in logical order")
            } else {
                // Latin words and numbers inside Arabic: poppler puts the neutral ':' and '+' where its own
                // reordering takes them, so the label and each word of the value are looked for apart.
                #expect(flat.contains(label), "form.pdf lacks the label '\(label)'")
                for word in value.split(separator: " ") { #expect(flat.contains(word), "form.pdf lacks '\(word)'") }
            }
        }
        if let text = try FormExportTests.pdfText(checklist) {
            let flat = Self.words(text)
            #expect(flat.contains("قائمة التحقق"))
            for item in review.checklist.flatMap(\.items) {
                #expect(flat.contains(Self.words(item)), "checklist.pdf lacks '\(Self.words(item))'")
            }
        }
        // The rendered first page, kept for the README (docs/screenshots/forms-arabic-pdf.png).
        let png = TestPaths.packageRoot.appendingPathComponent("docs/screenshots/forms-arabic-pdf.png")
        try FileManager.default.createDirectory(
            at: png.deletingLastPathComponent(), withIntermediateDirectories: true)
        let page = try Self.render(form, dpi: 80, png: png)
        #expect(page.map { !$0.shapes().isEmpty } ?? true)
    }

    @Test("Arabic is drawn joined: محمد is one connected shape, its letters kept apart by ZWNJ are four")
    func arabicJoins() throws {
        let joined = TextPDF(title: "t", lines: [.init(.body, "محمد")], language: "ar").render()
        let apart = TextPDF(title: "t", lines: [.init(.body, "م\u{200C}ح\u{200C}م\u{200C}د")], language: "ar").render()
        #expect(joined.note == nil && joined.unrepresentable == 0)
        guard let a = try Self.render(joined.bytes, dpi: 150), let b = try Self.render(apart.bytes, dpi: 150) else {
            return
        }
        #expect(a.pixels != b.pixels, "shaping changes the rendering")
        #expect(a.shapes().count == 1, "joined: one shape, not \(a.shapes().count)")
        #expect(b.shapes().count == 4, "isolated forms: four shapes, not \(b.shapes().count)")
        if let text = try FormExportTests.pdfText(joined.bytes) {
            #expect(Self.words(text).hasPrefix("محمد "), "logical order: \(text)")
        }
    }

    @Test(
        "right to left: in اب the alef stands right of the beh, the line flush right; Latin and numbers inside keep their order"
    )
    func rightToLeft() throws {
        let pdf = TextPDF(title: "t", lines: [.init(.body, "اب")], language: "ar").render()
        guard let page = try Self.render(pdf.bytes, dpi: 150) else { return }
        let shapes = page.shapes()
        #expect(shapes.count == 3, "alef, beh, its dot: \(shapes)")
        let alef = try #require(shapes.min { $0.minY < $1.minY })  // the tallest stroke reaches highest
        let dot = try #require(shapes.max { $0.maxY < $1.maxY })  // the beh's dot sits lowest
        #expect(alef.minX > dot.maxX, "the alef (first letter) is right of the beh: \(alef) vs \(dot)")
        #expect(alef.maxX > page.width * 3 / 4, "the line is flush right")
        let mixed = TextPDF(title: "t", lines: [.init(.body, "الرمز: D1234567 ولاية CA")], language: "ar").render()
        if let text = try FormExportTests.pdfText(mixed.bytes) {
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains("D1234567") && flat.contains("CA"), "\(flat)")
        }
    }

    @Test("without HarfBuzz or the font: Courier, '?' counted, and one note naming what to install")
    func fallbackNote() throws {
        let s = try Self.arabicSession()
        let noHarfBuzz = TextPDF.Fonts.embedded(
            regular: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", bold: "/nonexistent/DejaVuSans-Bold.ttf",
            environment: ["SANAD_HARFBUZZ": "/nonexistent/libharfbuzz.so.0"])
        let docs = FormDocuments(s, fonts: noHarfBuzz)
        let notes = docs.notes.joined(separator: "\n")
        #expect(notes.contains("HarfBuzz") && notes.contains("apt-get install libharfbuzz0b"), "\(notes)")
        #expect(
            docs.notes.filter { $0.contains("Latin-only Courier") }.count == 1, "one note on the fallback: \(notes)")
        #expect(notes.contains("form.pdf: ") && notes.contains("shown as '?'"), "\(notes)")
        let form = try #require(docs.files.first { $0.name == "form.pdf" }?.bytes)
        #expect(String(decoding: form.filter { $0 < 0x80 }, as: UTF8.self).contains("/BaseFont /Courier"))
        let noFont = TextPDF(title: "t", lines: [.init(.body, "اسم Name")]).render(
            fonts: .embedded(regular: "/nonexistent/font.ttf", bold: "/nonexistent/font.ttf", environment: [:]))
        #expect(noFont.unrepresentable == 3 && (noFont.note ?? "").contains("/nonexistent/font.ttf"))
        #expect((noFont.note ?? "").contains("fonts-dejavu-core"))
        let garbage = FormsFixture.temporaryDirectory().appendingPathComponent("not-a-font.ttf")
        try Data(repeating: 0x41, count: 4096).write(to: garbage)
        let badFont = TextPDF(title: "t", lines: [.init(.body, "Name")]).render(
            fonts: .embedded(regular: garbage.path, bold: garbage.path, environment: [:]))
        #expect(badFont.unrepresentable == 0 && (badFont.note ?? "").contains(garbage.path), "\(badFont.note ?? "")")
        var english = try FormsFixture.session("dmv-renewal")
        try FormsFixture.answer(&english, FormsFixture.dmvAnswers)
        let plain = FormDocuments(english, fonts: noHarfBuzz).notes
        #expect(plain.count == 1 && plain[0].contains("libharfbuzz0b"), "nothing lost, still said once: \(plain)")
        let latin = TextPDF(title: "t", lines: [.init(.body, "Name: Maria")]).render(fonts: noHarfBuzz)
        #expect(latin.unrepresentable == 0 && latin.note != nil)
        if let text = try FormExportTests.pdfText(latin.bytes) { #expect(text.contains("Name: Maria")) }
    }
}

/// The bidi layout's run order, without fonts: levels and visual order for Arabic, Latin, numbers and brackets.
@Suite("bidi runs for the PDF lines")
struct BidiLineTests {
    /// The runs of `text` in visual order, each as its text in logical order.
    static func visual(_ text: String) -> (rightToLeft: Bool, runs: [String]) {
        let scalars = Array(text.unicodeScalars)
        let line = BidiLine(scalars)
        return (
            line.rightToLeft,
            line.visualRuns.map { String(String.UnicodeScalarView(scalars[$0.range])) }
        )
    }

    @Test("a line whose first letter is Arabic reads right to left; Latin, numbers and dates inside keep their order")
    func arabicParagraph() {
        let name = Self.visual("الاسم: Maria Lopez")
        #expect(name.rightToLeft && name.runs == ["Maria Lopez", "الاسم: "])
        let date = Self.visual("تاريخ الميلاد: 1985-04-23")
        #expect(date.runs == ["1985-04-23", "تاريخ الميلاد: "])
        let state = Self.visual("الولاية: California (CA)")
        #expect(state.runs == ["California (CA)", "الولاية: "])
        #expect(Self.visual("طلب تأشيرة DS-160").runs == ["DS-160", "طلب تأشيرة "], "a number after Latin is Latin")
        let fee = Self.visual("الرسوم (USD)")
        // Brackets around Latin after Arabic stay right to left (drawn mirrored): (USD) at the line's left end.
        #expect(fee.runs == [")", "USD", "الرسوم ("])
    }

    @Test("a Latin line stays left to right; an Arabic name inside it is one right-to-left run")
    func latinParagraph() {
        let line = Self.visual("Full name: ماريا لوبيز")
        #expect(!line.rightToLeft && line.runs == ["Full name: ", "ماريا لوبيز"])
        #expect(Self.visual("Total: 47.00").runs == ["Total: 47.00"])
    }
}
