import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad ingest` end to end: the ICAO Doc 9303 specimen passport zone, an AAMVA v10 payload, plain text, a zone
/// that fails a check, an image through Tesseract, and files that are not documents.
@Suite("sanad ingest", .enabled(if: SanadCLI.executable != nil))
struct IngestCLITests {
    /// The TD3 specimen of ICAO Doc 9303 part 4 (Anna Maria Eriksson, Utopia).
    static let specimen = [
        "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10",
    ]
    /// The AAMVA 2020 standard's example payload (Virginia, version 10).
    static let aamva =
        "@\n\u{1E}\rANSI 636000100002DL00410278ZV03190008DLDAQT64235789\nDCSSAMPLE\nDDEN\nDACMICHAEL\nDDFN\nDADJOHN\n"
        + "DDGN\nDCUJR\nDCAD\nDCBK\nDCDPH\nDBD06062019\nDBB06061986\nDBA12102024\nDBC1\nDAU068 in\nDAYBRO\n"
        + "DAG2300 WEST BROAD STREET\nDAIRICHMOND\nDAJVA\nDAK232690000  \nDCF2424244747474786102204\nDCGUSA\n"
        + "DCK123456789\nDDAF\nDDB06062018\nDDC06062020\nDDD1\rZVZVA01\r"

    func ingestJSON(_ args: [String], stdin: String? = nil) throws -> (SanadCLI.Result, [JSONValue]) {
        let r = try SanadCLI.run(["ingest", "--json"] + args, stdin: stdin)
        let docs = try r.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        return (r, docs)
    }

    func proposals(_ doc: JSONValue) -> [String: String] {
        var out: [String: String] = [:]
        for p in doc["proposals"]?.arrayValue ?? [] {
            if let id = p["fieldId"]?.stringValue, let v = p["value"]?.stringValue { out[id] = v }
        }
        return out
    }

    @Test("a passport zone in OCR text around it fills the DS-160 passport fields with evidence")
    func passportText() throws {
        let text = "REPUBLIC OF UTOPIA\nPassport / Passeport\n" + Self.specimen.joined(separator: "\n") + "\n"
        let (r, docs) = try ingestJSON(["--today", "2010-01-01", "-"], stdin: text)
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(docs.first)
        #expect(doc["kind"]?.stringValue == "mrz" && doc["mrz"]?["valid"] == .bool(true))
        let p = proposals(doc)
        #expect(p["passportNumber"] == "L898902C3" && p["surname"] == "ERIKSSON" && p["givenNames"] == "ANNA MARIA")
        #expect(p["dateOfBirth"] == "1974-08-12" && p["passportExpiry"] == "2012-04-15" && p["sex"] == "female")
        let evidence = doc["proposals"]?.arrayValue?.first?["evidence"]
        #expect(evidence?["documentId"]?.stringValue == "stdin")
        #expect(evidence?["documentKind"]?.stringValue == "MRZ TD3")
    }

    @Test("a zone whose check digit fails is reported invalid and proposes nothing")
    func failedCheck() throws {
        let broken = [Self.specimen[0], "L898902C37UTO7408122F1204159ZE184226B<<<<<10"]
        let (r, docs) = try ingestJSON(["--today", "2010-01-01", "-"], stdin: broken.joined(separator: "\n"))
        #expect(r.status == 0)
        let doc = try #require(docs.first)
        #expect(doc["mrz"]?["valid"] == .bool(false) && proposals(doc).isEmpty)
        #expect(doc["proposalsWithheld"]?.stringValue?.contains("documentNumber") == true, "\(doc)")
        let text = try SanadCLI.run(["ingest", "--today", "2010-01-01", "-"], stdin: broken.joined(separator: "\n"))
        #expect(text.stdout.contains("NOT valid") && text.stdout.contains("no fields proposed"), "\(text.stdout)")
    }

    @Test("AAMVA barcode text fills the DMV renewal fields; plain text becomes chunks with byte offsets")
    func barcodeAndText() throws {
        let dir = try TestPaths.temporaryDirectory()
        let barcode = dir.appendingPathComponent("licence.txt")
        try Data(Self.aamva.utf8).write(to: barcode)
        let letter = dir.appendingPathComponent("letter.txt")
        try Data("Dear resident,\nyour water bill for October is 84 SAR.\n".utf8).write(to: letter)
        let (r, docs) = try ingestJSON([barcode.path, letter.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(docs.count == 2)
        #expect(docs[0]["kind"]?.stringValue == "aamva" && docs[0]["documentId"]?.stringValue == "licence.txt")
        let p = proposals(docs[0])
        #expect(p.values.contains("T64235789") && p.values.contains("SAMPLE") && p.values.contains("RICHMOND"), "\(p)")
        #expect(docs[1]["kind"]?.stringValue == "text")
        let chunk = try #require(docs[1]["chunks"]?.arrayValue?.first)
        #expect(chunk["text"]?.stringValue?.contains("84 SAR") == true)
    }

    @Test("a missing file, a folder, binary data and a bad --kind: clear errors; the readable documents still print")
    func badInput() throws {
        let dir = try TestPaths.temporaryDirectory()
        let binary = dir.appendingPathComponent("noise.bin")
        try Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 0x80) }).write(to: binary)
        let good = dir.appendingPathComponent("zone.txt")
        try Data(Self.specimen.joined(separator: "\n").utf8).write(to: good)
        let r = try SanadCLI.run([
            "ingest", "--today", "2010-01-01", dir.path + "/missing.txt", dir.path, binary.path, good.path,
        ])
        #expect(r.status == 1 && !r.crashed)
        #expect(r.stderr.contains("missing.txt") && r.stderr.contains("not a regular file"), "\(r.stderr)")
        #expect(r.stderr.contains("neither an image nor UTF-8 text"), "\(r.stderr)")
        #expect(r.stdout.contains("zone.txt: MRZ TD3") && r.stdout.contains("valid"), "\(r.stdout)")
        let usage = try SanadCLI.run(["ingest", "--kind", "receipt", good.path])
        #expect(usage.status == 64 && usage.stderr.contains("--kind"))
        let forced = try SanadCLI.run(["ingest", "--kind", "aamva", good.path])
        #expect(forced.status == 1 && forced.stderr.contains("'@'"), "\(forced.stderr)")
    }

    @Test("a rendered passport zone image goes through Tesseract to the same fields")
    func image() throws {
        guard let convert = ImageTools.imageMagick() else {
            print("skipped: ImageMagick's convert is not installed (scripts/setup installs it)")
            return
        }
        let png = try TestPaths.temporaryDirectory().appendingPathComponent("passport.png").path
        try ImageTools.renderLines(Self.specimen, to: png, convert: convert)
        let (r, docs) = try ingestJSON(["--today", "2010-01-01", png])
        if r.stderr.contains("Tesseract") && r.status != 0 {
            print("skipped: \(r.stderr)")
            return
        }
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(docs.first)
        #expect(doc["ocr"]?.stringValue?.hasPrefix("Tesseract") == true)
        #expect(proposals(doc)["passportNumber"] == "L898902C3", "\(doc)")
    }
}

/// `sanad ingest --index`: text chunks embedded into a vector index with their citations.
@Suite(
    "sanad ingest --index",
    .enabled(if: SanadCLI.executable != nil && TestPaths.model("all-MiniLM-L6-v2") != nil))
struct IngestIndexCLITests {
    @Test("every chunk of a letter is indexed with its document and byte range, and a query finds the right one")
    func indexChunks() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let letter = [
            String(
                repeating: "The residence permit of the applicant was renewed at the Riyadh office last spring. ",
                count: 8),
            String(repeating: "Your electricity bill of 245 SAR is due on the thirtieth of November. ", count: 8),
            String(repeating: "The school enrolment of your son requires a copy of the family record. ", count: 8),
        ].joined(separator: "\n\n")
        let file = dir.appendingPathComponent("letter.txt")
        try Data(letter.utf8).write(to: file)
        let index = dir.appendingPathComponent("docs.idx").path
        let ingest = try SanadCLI.run(["ingest", "--index", index, file.path])
        #expect(ingest.status == 0 && ingest.stderr.contains("chunks added"), "\(ingest.stderr)")
        let list = try SanadCLI.run(["index", "list", "--json", "--index", index])
        let entries = try list.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(entries.count >= 3, "\(list.stdout)")
        for e in entries {
            #expect(e["id"]?.stringValue?.hasPrefix("letter.txt#") == true)
            #expect(e["metadata"]?["documentId"]?.stringValue == "letter.txt")
            let bytes = e["metadata"]?["bytes"]?.stringValue?.split(separator: "-").compactMap { Int($0) } ?? []
            #expect(bytes.count == 2 && bytes[0] < bytes[1] && bytes[1] <= letter.utf8.count, "\(e)")
        }
        let query = try SanadCLI.run([
            "index", "query", "--json", "-k", "1", "--index", index, "when must I pay the power bill",
        ])
        let hit = try JSONValue.parse(query.stdout.split(separator: "\n").first.map(String.init) ?? "")
        #expect(hit["text"]?.stringValue?.contains("electricity bill") == true, "\(query.stdout)")
    }
}
