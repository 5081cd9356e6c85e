package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/types"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
)

// cluster holds the objects of a `tephra gen` file, by kind, in file order.
type cluster struct {
	priorityClasses []*schedulingv1.PriorityClass
	queues          []*vcv1beta1.Queue
	nodes           []*v1.Node
	podGroups       []*vcv1beta1.PodGroup
	pods            []*v1.Pod
}

// pendingPods counts the pods not yet bound to a node.
func (c *cluster) pendingPods() int {
	n := 0
	for _, p := range c.pods {
		if p.Spec.NodeName == "" {
			n++
		}
	}
	return n
}

// readCluster reads a JSON stream of Kubernetes objects, one per line, as `tephra gen`
// writes it (gzip-compressed when the name ends in .gz).
func readCluster(path string) (*cluster, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	c := &cluster{}
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; lines.Scan(); line++ {
		text := lines.Bytes()
		if len(strings.TrimSpace(string(text))) == 0 {
			continue
		}
		if err := c.add(text); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// add decodes one object by its kind. Objects without a UID get one made from their kind,
// namespace and name, as the API server would have given each a distinct one: Volcano keys
// tasks by pod UID.
func (c *cluster) add(text []byte) error {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(text, &head); err != nil {
		return err
	}
	decode := func(into interface{}) error { return json.Unmarshal(text, into) }
	switch head.Kind {
	case "PriorityClass":
		o := &schedulingv1.PriorityClass{}
		if err := decode(o); err != nil {
			return err
		}
		c.priorityClasses = append(c.priorityClasses, o)
	case "Queue":
		o := &vcv1beta1.Queue{}
		if err := decode(o); err != nil {
			return err
		}
		giveUID(&o.ObjectMeta.UID, head.Kind, "", o.Name)
		c.queues = append(c.queues, o)
	case "Node":
		o := &v1.Node{}
		if err := decode(o); err != nil {
			return err
		}
		giveUID(&o.ObjectMeta.UID, head.Kind, "", o.Name)
		c.nodes = append(c.nodes, o)
	case "PodGroup":
		o := &vcv1beta1.PodGroup{}
		if err := decode(o); err != nil {
			return err
		}
		giveUID(&o.ObjectMeta.UID, head.Kind, o.Namespace, o.Name)
		c.podGroups = append(c.podGroups, o)
	case "Pod":
		o := &v1.Pod{}
		if err := decode(o); err != nil {
			return err
		}
		giveUID(&o.ObjectMeta.UID, head.Kind, o.Namespace, o.Name)
		c.pods = append(c.pods, o)
	default:
		return fmt.Errorf("object of kind %q: the harness loads PriorityClass, Queue, Node, PodGroup and Pod", head.Kind)
	}
	return nil
}

func giveUID(uid *types.UID, kind, namespace, name string) {
	if *uid == "" {
		*uid = types.UID(kind + "/" + namespace + "/" + name)
	}
}
