//! [`MpiComm`]: the tiles' [`Comm`] over MPI (rsmpi), one rank per tile. Built with the
//! `mpi` feature; `orogen bake --tiles NxM` uses it when started by `mpirun -np N·M`.

use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use orogen_core::tiles::Comm;
use orogen_core::{OrogenError, Result};

/// How long a receive polls before it starts sleeping between probes, and its longest
/// sleep.
const SPIN: Duration = Duration::from_micros(200);
const MAX_NAP: Duration = Duration::from_millis(1);

/// A send in flight: MPI reads the buffer until the request completes, then it is freed.
struct InFlight {
    request: Request<'static, [u8], StaticScope>,
    buffer: *mut [u8],
}

/// The tiles' [`Comm`] over an MPI communicator (normally the world's).
///
/// Sends are immediate (`MPI_Isend`) and their buffers kept until they complete, so a send
/// never waits for its receive, as the trait promises (a blocking `MPI_Send` of a large
/// halo would, and two tiles sending to each other would then wait forever).
pub struct MpiComm {
    world: SimpleCommunicator,
    in_flight: Vec<InFlight>,
    bytes: u64,
}

/// Whether this process was started by an MPI launcher (Open MPI's `mpirun`, or a PMI one
/// such as Slurm's `srun` or MPICH's `mpiexec`).
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

impl MpiComm {
    /// The world's communicator of an initialized MPI.
    pub fn new(world: SimpleCommunicator) -> Self {
        MpiComm {
            world,
            in_flight: Vec::new(),
            bytes: 0,
        }
    }

    /// Frees the buffers of the sends that completed.
    fn reap(&mut self) {
        let mut i = 0;
        while i < self.in_flight.len() {
            let InFlight { request, buffer } = self.in_flight.swap_remove(i);
            match request.test() {
                Ok(_) => {
                    // SAFETY: `buffer` came from `Box::leak` in `send`, and the only
                    // borrow of it was the request, which just completed.
                    drop(unsafe { Box::from_raw(buffer) });
                }
                Err(request) => {
                    self.in_flight.push(InFlight { request, buffer });
                    let last = self.in_flight.len() - 1;
                    self.in_flight.swap(i, last);
                    i += 1;
                }
            }
        }
    }

    /// Stops every rank of the run (`MPI_Abort`) with exit code `code`: a rank that failed
    /// mid-run, so that none waits for it.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Drop for MpiComm {
    /// Waits for every send in flight (MPI must not be finalized with one pending).
    fn drop(&mut self) {
        for InFlight { request, buffer } in self.in_flight.drain(..) {
            request.wait();
            // SAFETY: as in `reap`: the request completed, nothing else borrows it.
            drop(unsafe { Box::from_raw(buffer) });
        }
    }
}

fn tag_of(rank: usize, tag: u32) -> Result<i32> {
    i32::try_from(tag).map_err(|_| {
        OrogenError::invalid(
            format!("tiles rank {rank}"),
            format!("message tag {tag} is beyond MPI's tags"),
        )
    })
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn send(&mut self, to: usize, tag: u32, data: Vec<u8>) -> Result<()> {
        let rank = self.rank();
        if to >= self.size() {
            return Err(OrogenError::invalid(
                format!("tiles rank {rank}"),
                format!("send to rank {to}, but there are {} ranks", self.size()),
            ));
        }
        let tag = tag_of(rank, tag)?;
        if to != rank {
            self.bytes += data.len() as u64;
        }
        self.reap();
        let leaked: &'static mut [u8] = Box::leak(data.into_boxed_slice());
        let buffer: *mut [u8] = leaked;
        // SAFETY: `buffer` stays allocated until the request completes (`reap`, `drop`).
        let shared: &'static [u8] = unsafe { &*buffer };
        let request = self
            .world
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, shared, tag);
        self.in_flight.push(InFlight { request, buffer });
        Ok(())
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>> {
        let rank = self.rank();
        if from >= self.size() {
            return Err(OrogenError::invalid(
                format!("tiles rank {rank}"),
                format!(
                    "receive from rank {from}, but there are {} ranks",
                    self.size()
                ),
            ));
        }
        let tag = tag_of(rank, tag)?;
        self.reap();
        // Probe, spinning briefly, then sleeping between probes (20 µs doubling to 1 ms):
        // Open MPI's blocking receive polls, and with more ranks than cores (`mpirun
        // --oversubscribe`) a waiting rank then takes the core from the rank it waits for.
        let process = self.world.process_at_rank(from as i32);
        let spin_until = Instant::now() + SPIN;
        let mut nap = Duration::from_micros(20);
        loop {
            if let Some(matched) = process.immediate_matched_probe_with_tag(tag) {
                let (data, _) = matched.matched_receive_vec::<u8>();
                return Ok(data);
            }
            if Instant::now() < spin_until {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(MAX_NAP);
        }
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes
    }
}
