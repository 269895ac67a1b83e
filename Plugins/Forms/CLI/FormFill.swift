import FormsPlugin
import Foundation
import OCRIngestCLI
import OCRIngestPlugin
import SanadCommandLine

/// `sanad form fill SESSION FILE`: the fields a document proposes (a passport's machine-readable zone for the DS-160,
/// a licence barcode's text for the DMV renewal; text or an image through Tesseract), each shown with its evidence
/// and saved only when the person accepts it, with the document as its evidence.
extension FormCommand {
    static func fill(
        _ session: inout FormSession, file: String, kind: DocumentKind, ocrLanguage: String, acceptAll: Bool,
        clock: @Sendable () -> Date
    ) throws -> Int32 {
        let documentID = file == "-" ? "stdin" : URL(fileURLWithPath: file).lastPathComponent
        var ocr: Result<TesseractOCR, any Error>?
        let document = try IngestCommand.read(
            file, documentID: documentID, kind: kind, language: ocrLanguage,
            today: DocumentIngest.calendarDate(clock()), ocr: &ocr)
        print(IngestCommand.summary(document, file: file).split(separator: "\n").first.map(String.init) ?? "")
        let inForm = Set(session.flow.fields.map(\.id))
        let proposals = document.proposals.filter { inForm.contains($0.fieldID) }
        let others = document.proposals.filter { !inForm.contains($0.fieldID) }.map(\.fieldID)
        if !others.isEmpty {
            print("not fields of this form (\(session.template.metadata.id)): \(others.joined(separator: ", "))")
        }
        guard !proposals.isEmpty else {
            printError(
                "note: \(documentID) proposes no field of \(session.template.metadata.id)"
                    + (document.proposalsWithheld.map { ": \($0)" } ?? ""))
            return ExitCode.failure
        }
        var saved = 0
        var decider = ProposalDecider(acceptAll: acceptAll)
        for (n, p) in proposals.enumerated() {
            let label = session.template.field(p.fieldID)?.label.text(session.language) ?? p.fieldID
            let current = session.storedAnswers[p.fieldID]
            print(
                "[\(n + 1)/\(proposals.count)] \(label) = \(p.value)   ← \(p.evidence.documentKind), \(p.evidence.sourceField)"
                    + (current.map { $0 == p.value ? "  (already saved)" : "  (replaces '\($0)')" } ?? ""))
            for r in p.evidence.repairs { print("    repaired: \(r)") }
            for note in p.evidence.notes { print("    note: \(note)") }
            guard decider.accept() else {
                if decider.stopped { break }
                continue
            }
            let outcome = try session.apply(
                .fromDocument(
                    fieldID: p.fieldID, value: p.value, documentID: p.evidence.documentID,
                    documentKind: p.evidence.documentKind, sourceField: p.evidence.sourceField,
                    repairs: p.evidence.repairs))
            switch outcome {
            case .refused(let problem): print("  ✗ \(TerminalText.escaped("\(problem.message) \(problem.suggestion)"))")
            case .saved(let field, let value, let reopened):
                saved += 1
                print("  ✓ saved \(field) = \(TerminalText.escaped(value)) (from \(TerminalText.escaped(documentID)))")
                for r in reopened { print("  ! \(r.message)") }
            }
        }
        let progress = session.progress
        print("\(saved) field(s) saved from \(documentID); \(progress.percent)% of \(session.id) answered")
        if let q = session.nextQuestion { print("next: \(q.prompt)   ('sanad form resume \(session.id)' continues)") }
        return ExitCode.success
    }
}
