/*
 * Writes a ZooKeeper data tree into a data dir, as a snapshot a server started on that dir loads:
 * persistent nodes with data and a chosen child counter: the sequence number ZooKeeper gives the
 * next sequential child. Used by tests that need a counter near 2^31.
 *
 *   java -cp <zookeeper classpath> test/support/SeedSnapshot.java <dataDir> <path>=<next sequence>[:<data>] ...
 *
 * Missing ancestors are created empty. Only ZooKeeper's own classes write the tree, so the server
 * reads it as its own (digest included).
 */
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

public class SeedSnapshot {
  private static long zxid = 0;

  public static void main(String[] args) throws Exception {
    File dataDir = new File(args[0]);
    DataTree tree = new DataTree();
    for (int i = 1; i < args.length; i++) {
      String[] spec = args[i].split("=", 2);
      String path = spec[0];
      String[] counter = spec[1].split(":", 2);
      int sequence = Integer.parseInt(counter[0]);
      byte[] data = counter.length > 1 ? counter[1].getBytes(StandardCharsets.UTF_8) : new byte[0];
      createWithParents(tree, path, data);
      // ZooKeeper names a sequential child after the parent's stored child counter (creates
      // only), and shows clients 2 * stored - numChildren as the Stat's cversion. A child
      // created with parentCVersion n leaves the stored counter at n; then it goes.
      String child = path + "/seed";
      tree.createNode(child, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, sequence, ++zxid, now());
      tree.deleteNode(child, ++zxid);
      if (tree.getNode(path).stat.getCversion() != sequence) throw new IllegalStateException(path);
      Stat stat = new Stat();
      tree.getNode(path).copyStat(stat);
      System.out.println(path + " next sequence=" + sequence + " cversion=" + stat.getCversion());
    }
    tree.lastProcessedZxid = zxid;
    FileTxnSnapLog snapLog = new FileTxnSnapLog(dataDir, dataDir);
    snapLog.save(tree, new ConcurrentHashMap<>(), true);
    snapLog.close();
  }

  private static void createWithParents(DataTree tree, String path, byte[] data) throws Exception {
    String[] segments = path.substring(1).split("/");
    String current = "";
    for (int i = 0; i < segments.length; i++) {
      current += "/" + segments[i];
      boolean last = i == segments.length - 1;
      if (tree.getNode(current) != null) continue;
      tree.createNode(current, last ? data : new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, ++zxid, now());
    }
  }

  private static long now() {
    return System.currentTimeMillis();
  }
}
