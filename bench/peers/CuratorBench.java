// The bench's Curator peer: the bench scenarios through Apache Curator's recipes,
// with the same critical section as ours (who is inside, checked, then a yield) and the same
// sizes. Run as a single-file program (Java 11+), one JVM for all scenarios so start-up and JIT
// warm-up stay out of the measured time:
//   java -cp <curator, zookeeper, guava, slf4j jars> CuratorBench.java <connect> <root>
//     <quick|full> [deadline seconds per scenario]
// Prints one JSON line per scenario: scenario, ops, opsPerSec, p50Ms, p99Ms, violations.
// With `serve` instead of quick|full: many-keys in blocks on command, for the row measured in
// turn with ours (bench/curator.workload.ts): it prints {"ready":true}, then per line read (ops
// per caller) one JSON line, the violations so far and each op's latency in microseconds.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;

public class CuratorBench {
  interface Op {
    void run(int caller, int n) throws Exception;
  }

  /** Who is inside one path: writers alone, readers beside readers, at most `limit` leases. */
  static final class Inside {
    final AtomicInteger readers = new AtomicInteger();
    final AtomicInteger writers = new AtomicInteger();
  }

  static final ConcurrentHashMap<String, Inside> inside = new ConcurrentHashMap<>();
  static final AtomicInteger violations = new AtomicInteger();

  static void critical(String path, boolean write, int limit) {
    Inside in = inside.computeIfAbsent(path, p -> new Inside());
    if (write) {
      if (in.writers.incrementAndGet() > 1 || in.readers.get() > 0) violations.incrementAndGet();
    } else {
      if (in.readers.incrementAndGet() > limit || in.writers.get() > 0) violations.incrementAndGet();
    }
    Thread.yield(); // as ours awaits one turn of the event loop
    if (write) in.writers.decrementAndGet();
    else in.readers.decrementAndGet();
  }

  static long DEADLINE_MS = 60_000;

  static void run(String scenario, int callers, int ops, int warmup, Op op) {
    violations.set(0);
    long[][] latencies = new long[callers][ops];
    long started;
    try {
      loop(callers, warmup, op, null);
      started = System.nanoTime();
      loop(callers, ops, op, latencies);
    } catch (Exception e) {
      // A hang or an error: a row that says so, then the next scenario.
      System.out.printf("{\"scenario\":\"%s\",\"error\":\"%s\"}%n", scenario,
          String.valueOf(e.getMessage()).replace("\"", "'"));
      System.out.flush();
      return;
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
    System.out.printf(
        "{\"scenario\":\"%s\",\"ops\":%d,\"opsPerSec\":%.1f,\"p50Ms\":%.3f,\"p99Ms\":%.3f,\"violations\":%d}%n",
        scenario, all.length, all.length / seconds, all[all.length / 2] / 1e6,
        all[(int) Math.min(all.length - 1, Math.floor(all.length * 0.99))] / 1e6, violations.get());
    System.out.flush();
  }

  static void loop(int callers, int ops, Op op, long[][] latencies) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Exception> failures = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      final int caller = c;
      Thread t = new Thread(() -> {
        try {
          for (int n = 0; n < ops; n++) {
            long t0 = System.nanoTime();
            op.run(caller, n);
            if (latencies != null) latencies[caller][n] = System.nanoTime() - t0;
          }
        } catch (Exception e) {
          synchronized (failures) { failures.add(e); }
        }
      });
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    long deadline = System.currentTimeMillis() + DEADLINE_MS;
    for (Thread t : threads) t.join(Math.max(1, deadline - System.currentTimeMillis()));
    for (Thread t : threads) {
      if (t.isAlive()) throw new Exception("did not finish within " + DEADLINE_MS / 1000 + " s");
    }
    if (!failures.isEmpty()) throw failures.get(0);
  }

  static void held(InterProcessLock lock, String path, boolean write, int limit) throws Exception {
    lock.acquire();
    try {
      critical(path, write, limit);
    } finally {
      lock.release();
    }
  }

  /** many-keys: 32 callers on 32 paths, one mutex object each. */
  static Op manyKeys(CuratorFramework client, String root) {
    InterProcessMutex[] many = new InterProcessMutex[32];
    for (int i = 0; i < 32; i++) many[i] = new InterProcessMutex(client, root + "/many-keys/k" + i);
    return (c, n) -> held(many[c], root + "/many-keys/k" + c, true, 1);
  }

  /** `serve`: a block of many-keys per line read, answered with its latencies; ends at EOF. */
  static void serve(CuratorFramework client, String root) throws Exception {
    Op op = manyKeys(client, root);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("{\"ready\":true}");
    System.out.flush();
    for (String line; (line = in.readLine()) != null; ) {
      int ops = Integer.parseInt(line.trim());
      long[][] latencies = new long[32][ops];
      StringBuilder reply = new StringBuilder();
      try {
        loop(32, ops, op, latencies);
        reply.append("{\"violations\":").append(violations.get()).append(",\"latenciesUs\":[");
        for (int c = 0; c < 32; c++) {
          for (int n = 0; n < ops; n++) {
            if (c > 0 || n > 0) reply.append(',');
            reply.append(latencies[c][n] / 1000);
          }
        }
        reply.append("]}");
      } catch (Exception e) {
        reply.append("{\"error\":\"").append(String.valueOf(e.getMessage()).replace("\"", "'")).append("\"}");
      }
      System.out.println(reply);
      System.out.flush();
    }
  }

  public static void main(String[] args) throws Exception {
    String root = args[1];
    int div = args[2].equals("quick") ? 10 : 1;
    if (args.length > 3) DEADLINE_MS = Long.parseLong(args[3]) * 1000;
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10_000, 10_000, new RetryOneTime(100));
    client.start();
    client.blockUntilConnected();
    if (args[2].equals("serve")) {
      serve(client, root);
      client.close();
      System.exit(0);
    }

    // uncontended: 1 caller, one path (ours: 2000 ops, 3000 warm-up)
    InterProcessMutex solo = new InterProcessMutex(client, root + "/uncontended");
    run("uncontended", 1, Math.max(5, 2000 / div), Math.max(2, 3000 / div),
        (c, n) -> held(solo, root + "/uncontended", true, 1));

    // same-key-1p: 32 callers on one path, a mutex object each (ours: 500 ops each)
    InterProcessMutex[] same = new InterProcessMutex[32];
    for (int i = 0; i < 32; i++) same[i] = new InterProcessMutex(client, root + "/same-key-1p");
    run("same-key-1p", 32, Math.max(5, 500 / div), 2,
        (c, n) -> held(same[c], root + "/same-key-1p", true, 1));

    // many-keys: 32 callers, a path each (ours: 100 ops each)
    run("many-keys", 32, Math.max(5, 100 / div), Math.max(2, 100 / div), manyKeys(client, root));

    // rw-read-heavy: 1 op in 10 writes (ours: 200 ops each)
    InterProcessReadWriteLock[] rw = new InterProcessReadWriteLock[32];
    for (int i = 0; i < 32; i++) rw[i] = new InterProcessReadWriteLock(client, root + "/rw-read-heavy");
    run("rw-read-heavy", 32, Math.max(5, 200 / div), 2, (c, n) -> {
      boolean write = (c + n) % 10 == 0;
      held(write ? rw[c].writeLock() : rw[c].readLock(), root + "/rw-read-heavy", write, Integer.MAX_VALUE);
    });

    // semaphore-4: 4 leases, 32 callers (ours: 50 ops each)
    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, root + "/semaphore-4", 4);
    run("semaphore-4", 32, Math.max(5, 50 / div), 2, (c, n) -> {
      Lease lease = semaphore.acquire();
      try {
        critical(root + "/semaphore-4", false, 4);
      } finally {
        semaphore.returnLease(lease);
      }
    });

    // multi-3: 3 paths of 8, overlapping, named in different orders, sorted (ours: 50 ops each)
    run("multi-3", 32, Math.max(5, 50 / div), 2, (c, n) -> {
      int first = (c * 3 + n) % 8;
      List<String> members = new ArrayList<>();
      for (int k = 0; k < 3; k++) members.add(root + "/multi-3/p" + ((first + (c % 2 == 0 ? k : 3 - k)) % 8));
      // InterProcessMultiLock takes its locks in the order given: sets named in opposite orders
      // deadlock, so the caller sorts them (ours does that itself).
      members.sort(null);
      InterProcessMultiLock multi = new InterProcessMultiLock(client, members);
      multi.acquire();
      try {
        for (String p : members) critical(p, true, 1);
      } finally {
        multi.release();
      }
    });
    System.exit(0); // threads of a scenario that hung may still wait on the session
  }
}
