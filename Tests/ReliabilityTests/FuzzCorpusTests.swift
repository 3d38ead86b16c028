import Foundation
import KeychainFuzzTargets
import Testing

/// The committed fuzz corpus (`Fuzz/Corpus/<target>/`: seeds, and every input a fuzzer
/// found that crashed, once fixed) replayed through the fuzz targets on every test run.
/// `TROUSSEAU_WRITE_FUZZ_SEEDS=1` (re)writes the seeds.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    @Test(arguments: FuzzTarget.allCases)
    func theCorpusDecodesWithoutCrashing(_ target: FuzzTarget) throws {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        if ProcessInfo.processInfo.environment["TROUSSEAU_WRITE_FUZZ_SEEDS"] == "1" {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (index, seed) in FuzzTarget.seeds(for: target).enumerated() {
                try seed.write(to: directory.appendingPathComponent("seed-\(index)"))
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files.count >= FuzzTarget.seeds(for: target).count)
        var mutated = 0
        for name in files {
            let input = try Data(contentsOf: directory.appendingPathComponent(name))
            target.run(input)
            // And every truncation and single-byte flip of it.
            for cut in 0..<input.count { target.run(input.prefix(cut)) }
            for index in input.indices {
                var flipped = input
                flipped[index] ^= 0xff
                target.run(flipped)
                mutated += 1
            }
        }
        print("reliability: fuzz corpus replay (\(target.rawValue)) | \(files.count) corpus inputs, each with every truncation and \(mutated) byte flips in all, no crash | - | short")
    }
}
