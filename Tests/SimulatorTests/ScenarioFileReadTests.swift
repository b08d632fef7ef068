import Foundation
import Simulator
import TestSupport
import Testing

/// `Scenario.load(path:)` on what a shell hands `simulate` besides a regular file.
@Suite struct ScenarioFileReadTests {
    /// `simulate <(make-scenario)` and `/dev/stdin` are pipes: they were "cannot read /dev/fd/63".
    @Test func aScenarioFromAPipeLoads() throws {
        let pipe = Pipe()
        let json = #"{"name": "piped", "steps": [{"action": "start", "actor": "relay"}]}"#
        try pipe.fileHandleForWriting.write(contentsOf: Data(json.utf8))
        try pipe.fileHandleForWriting.close()
        let scenario = try Scenario.load(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        #expect(scenario.name == "piped" && scenario.steps.count == 1)
    }

    /// Why a path cannot be read, in the system's words (it was "cannot read" alone); and what
    /// is far larger than a scenario (a device that never ends) is refused once it is.
    @Test func whyAFileCannotBeReadIsSaid() throws {
        let directory = TemporaryDirectory()
        #expect(throws: ScenarioError.invalid("cannot read \(directory.path): Is a directory")) {
            try Scenario.load(path: directory.path)
        }
        #expect(throws: ScenarioError.invalid("cannot read \(directory.path("none.json")): No such file or directory")) {
            try Scenario.load(path: directory.path("none.json"))
        }
        #expect(throws: ScenarioError.invalid("/dev/zero: larger than 4 MiB, not a scenario")) {
            try Scenario.load(path: "/dev/zero")
        }
    }
}
