//! The mesh against the CUDA driver test double (`tests/doubles/cuda_emulated`): real processes
//! meeting in a real directory over emulated GPUs, never a real GPU.
//!
//! Every process is this test binary re-run as a child (see `support/cuda_double.rs`), since
//! libuform loads the driver once per process. The runs of several processes start their
//! children all at once, each told its index through the environment, and read back the one
//! `mesh-answer` line each prints.

mod support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use support::cuda_double::{cuda_double, within, CHILD_ROLE};
use uform::*;

const CHILD_TEST: &str = "mesh_cuda_double_child_runs_a_scenario";

/// What a member child is told: its index, the run's size, the directory and the job.
const INDEX: &str = "UFORM_MESH_TEST_INDEX";
const COUNT: &str = "UFORM_MESH_TEST_COUNT";
const DIRECTORY: &str = "UFORM_MESH_TEST_DIRECTORY";
const JOB: &str = "UFORM_MESH_TEST_JOB";

/// `count` emulated Hopper GPUs of 64 MiB each.
fn gpus(count: usize) -> String {
    "device cc=9.0 memory=64M\n".repeat(count)
}

fn run_child(scenario: &str, config: &str) {
    support::cuda_double::run_child(CHILD_TEST, scenario, cuda_double(), Some(config), &[]);
}

#[test]
fn mesh_cuda_double_one_process_over_two_gpus() {
    run_child("one_process", &gpus(2));
}

#[test]
fn mesh_cuda_double_holds_its_executor_dropped_first() {
    run_child("executor_dropped_first", &gpus(2));
}

#[test]
fn mesh_cuda_double_four_processes_meet_through_a_directory() {
    let run = Run::new("rust-four");
    let answers = run.members(&[2, 2, 2, 2]);
    for (index, answer) in answers.iter().enumerate() {
        let expected = format!(
            "ok index={index} gpus_per_host_domain=2 gpus_per_multimem_domain=1 gpus_per_colocated_domain=8 \
             first_gpu_index={} tier=PeerRead class=Some(NvidiaHopper) communicator=NotFound",
            2 * index
        );
        assert!(answer.starts_with(&expected), "index {index} answered {answer:?}, expected {expected:?}");
        assert!(answer.contains("no data plane"), "{answer}");
    }
    run.assert_clean();
}

#[test]
fn mesh_cuda_double_processes_driving_different_gpu_counts_do_not_form() {
    let run = Run::new("rust-mismatch");
    for answer in run.members(&[2, 2, 3]) {
        assert!(answer.starts_with("error Mismatch "), "{answer}");
        assert!(answer.contains("GPUs per process") && answer.contains("index 2"), "{answer}");
    }
    run.assert_clean();
}

/// The child's half: does nothing unless a parent above selected a scenario.
#[test]
#[ignore = "the child role of the mesh tests against the CUDA driver test double, run in a process of its own"]
fn mesh_cuda_double_child_runs_a_scenario() {
    let Ok(scenario) = std::env::var(CHILD_ROLE) else { return };
    within(Duration::from_secs(120), {
        let scenario = scenario.clone();
        move || match scenario.as_str() {
            "one_process" => one_process(),
            "executor_dropped_first" => executor_dropped_first(),
            "member" => member(),
            other => panic!("unknown scenario {other}"),
        }
    });
    println!("scenario {scenario}: passed");
}

// ---- helpers ----

/// A VRAM executor over every device, without pins or scratch.
fn vram() -> Executor {
    // SAFETY: no borrowed streams.
    unsafe { Executor::for_vram(&[], None, &[], None, &[], 0, 0) }.unwrap_or_else(|error| panic!("for_vram: {error}"))
}

/// Threads of this process named `uform:ram:*`: the executors' host decoders.
fn ram_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { panic!("/proc/self/task") };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("uform:ram:"))
        .count()
}

fn assert_send_sync<T: Send + Sync>() {}

/// A run of member processes in a fresh directory under the target's temporary directory.
struct Run {
    directory: PathBuf,
    job: &'static str,
}

impl Run {
    fn new(job: &'static str) -> Run {
        let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mesh-{job}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).expect("the rendezvous directory");
        Run { directory, job }
    }

    /// Starts one child per entry of `gpu_counts` (that many GPUs each) at once, index i the
    /// i-th, and answers each one's `mesh-answer` line, in index order.
    fn members(&self, gpu_counts: &[usize]) -> Vec<String> {
        let children: Vec<Child> = gpu_counts
            .iter()
            .enumerate()
            .map(|(index, &count)| {
                Command::new(std::env::current_exe().expect("the test binary"))
                    .args(["--exact", CHILD_TEST, "--include-ignored", "--nocapture", "--test-threads=1"])
                    .env(CHILD_ROLE, "member")
                    .env("UFORM_CUDA_LIBRARY", cuda_double())
                    .env("UFORM_NCCL_LIBRARY", support::cuda_double::NO_NCCL)
                    .env("UFORM_CUDA_DOUBLE_CONFIG", gpus(count))
                    .env_remove("CUDA_DEVICE_ORDER")
                    .env(INDEX, index.to_string())
                    .env(COUNT, gpu_counts.len().to_string())
                    .env(DIRECTORY, &self.directory)
                    .env(JOB, self.job)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("starting a member")
            })
            .collect();
        children
            .into_iter()
            .enumerate()
            .map(|(index, child)| {
                let output = child.wait_with_output().expect("a member's output");
                let stdout = String::from_utf8_lossy(&output.stdout);
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(output.status.success(), "member {index} failed:\n{stdout}{stderr}");
                assert!(stdout.contains("scenario member: passed"), "member {index} did not run:\n{stdout}");
                // The harness prints the test's name on the same line, before the answer.
                let line = stdout.lines().find_map(|line| Some(line.split_once("mesh-answer ")?.1));
                line.unwrap_or_else(|| panic!("member {index} answered nothing:\n{stdout}")).to_string()
            })
            .collect()
    }

    /// The run left nothing behind: its job directory is gone, and so is ours.
    fn assert_clean(&self) {
        assert!(!self.directory.join(self.job).exists(), "the run cleaned up {}", self.job);
        std::fs::remove_dir(&self.directory).expect("nothing else in the rendezvous directory");
    }
}

// ---- scenarios ----

fn one_process() {
    assert_send_sync::<Mesh>();
    let executor = vram();
    assert_eq!(executor.devices(), 2);
    let mesh = Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap();
    let description = mesh.describe().unwrap();
    assert_eq!(
        description,
        MeshDescription {
            gpus_per_host_domain: 2,
            gpus_per_multimem_domain: 1,
            gpus_per_colocated_domain: 2,
            host_domain_index: 0,
            first_gpu_index: 0,
            multimem_tier: MultimemTier::PeerRead,
            gpu_class: Some(GPUClass::NvidiaHopper),
        }
    );
    println!("{mesh:?}");
    assert!(format!("{mesh:?}").starts_with("Mesh(MeshDescription"));

    // Without NCCL in the process the mesh forms with no data plane, and says so.
    for device in 0..2 {
        let error = mesh.communicator(device).expect_err("no data plane");
        assert_eq!(error.status(), Status::NotFound, "{error}");
        assert!(error.message().contains("no data plane"), "{error}");
        assert!(error.message().contains("uform_mesh_communicator"), "{error}");
    }
    for device in [2, 5, usize::MAX] {
        let error = mesh.communicator(device).expect_err("past the devices");
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        assert!(error.message().contains(&format!("device {device} of 2")), "{error}");
    }

    // Send + Sync: read from other threads, and dropped on one.
    let mesh = Arc::new(mesh);
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let mesh = mesh.clone();
            thread::spawn(move || (mesh.describe().unwrap(), mesh.communicator(0).unwrap_err().status()))
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), (description, Status::NotFound));
    }
    let mesh = Arc::into_inner(mesh).expect("the readers are gone");
    thread::spawn(move || drop(mesh)).join().unwrap();

    // A second mesh over the same executor, with the options of a run of one given explicitly.
    let options = MeshOptions { host_domain_count: 1, timeout_seconds: 5.0, ..Default::default() };
    let again = Mesh::bootstrap(&executor, &options).unwrap();
    assert_eq!(again.describe().unwrap(), description);
}

fn executor_dropped_first() {
    assert_eq!(ram_threads(), 0);
    // Dropped first: the drop answers at once, and the executor's threads stay for the mesh...
    let executor = vram();
    let threads = ram_threads();
    assert!(threads >= 1, "a VRAM executor has host decoders");
    let mesh = Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap();
    drop(executor);
    assert_eq!(ram_threads(), threads, "the mesh holds the executor");
    assert_eq!(mesh.describe().unwrap().gpus_per_host_domain, 2);
    assert_eq!(mesh.communicator(1).unwrap_err().status(), Status::NotFound);
    // ...until the mesh goes, here on another thread.
    thread::spawn(move || drop(mesh)).join().unwrap();
    assert_eq!(ram_threads(), 0, "the mesh's drop closed the executor");

    // Several meshes over one executor: the last one out closes it.
    let executor = vram();
    let mut meshes: Vec<Mesh> = (0..3).map(|_| Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap()).collect();
    drop(meshes.remove(1));
    drop(executor);
    assert_eq!(ram_threads(), threads);
    drop(meshes.remove(0));
    assert_eq!(ram_threads(), threads);
    drop(meshes);
    assert_eq!(ram_threads(), 0);

    // The mesh dropped first: the executor works on, and its own drop closes it.
    let executor = vram();
    drop(Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap());
    let seen = std::sync::Mutex::new(HashSet::new());
    On::new(&executor)
        .for_devices(|slot| {
            seen.lock().unwrap().insert(slot.device());
            Ok(())
        })
        .unwrap();
    assert_eq!(seen.into_inner().unwrap(), HashSet::from([0, 1]));
    drop(executor);
    assert_eq!(ram_threads(), 0);

    // A mesh and a device arena both holding a dropped executor: the last of them closes it.
    let executor = vram();
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    let mesh = Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap();
    drop(executor);
    drop(mesh);
    assert_eq!(ram_threads(), threads, "the arena still holds it");
    drop(arena);
    assert_eq!(ram_threads(), 0);
}

/// One process of a run, told its place through the environment; prints one `mesh-answer`.
fn member() {
    let variable = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("the parent sets {name}"));
    let directory = PathBuf::from(variable(DIRECTORY));
    let job = variable(JOB);
    let options = MeshOptions {
        host_domain_index: variable(INDEX).parse().unwrap(),
        host_domain_count: variable(COUNT).parse().unwrap(),
        directory: &directory,
        job: &job,
        timeout_seconds: 60.0,
        ..Default::default()
    };
    let executor = vram();
    let answer = match Mesh::bootstrap(&executor, &options) {
        Ok(mesh) => {
            let d = mesh.describe().unwrap();
            let communicator = mesh.communicator(0).expect_err("no NCCL here");
            format!(
                "ok index={} gpus_per_host_domain={} gpus_per_multimem_domain={} gpus_per_colocated_domain={} \
                 first_gpu_index={} tier={:?} class={:?} communicator={:?} {}",
                d.host_domain_index,
                d.gpus_per_host_domain,
                d.gpus_per_multimem_domain,
                d.gpus_per_colocated_domain,
                d.first_gpu_index,
                d.multimem_tier,
                d.gpu_class,
                communicator.status(),
                communicator.message()
            )
        }
        Err(error) => format!("error {:?} {}", error.status(), error.message()),
    };
    println!("mesh-answer {}", answer.replace('\n', " "));
}
