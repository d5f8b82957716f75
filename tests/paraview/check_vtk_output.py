"""Checks volccl's VTK output in ParaView and renders it.

Run under pvpython (ParaView 5.11), best through run_pvpython.sh beside this file:

    run_pvpython.sh check_vtk_output.py --dir OUT --components 4 \
        --centroid 2 14.63 57.21 65 --png OUT/view.png

Opens DIR/volccl.pvd, and DIR/labels.vti, DIR/components.vtp and DIR/surfaces.vtp (when there)
with ParaView's readers, and checks that the collection holds those files, that
components.vtp holds N components, that the component of label LABEL has the centroid X Y Z
(relative tolerance --tolerance), that the largest label of the image is N and that the
"ellipsoid" tensors are there. It then renders offscreen the image's outline, the surfaces
coloured by label (or, without surfaces.vtp, the labelled voxels) and the ellipsoids drawn
by a Tensor Glyph of a sphere of radius 1, saves the picture as a PNG of 1200x900 and checks
that it is not blank.

Exit status: 0 when every check passes, 1 with a message otherwise.
"""

import argparse
import math
import os
import sys
import xml.etree.ElementTree as ElementTree

from paraview import servermanager
from paraview import simple
from vtkmodules.vtkIOImage import vtkPNGReader

BACKGROUND = [0.12, 0.12, 0.16]
GLYPH_COLOUR = [1.0, 0.85, 0.3]
IMAGE_SIZE = [1200, 900]


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="the directory volccl wrote")
    parser.add_argument("--components", type=int, required=True, help="expected count N")
    parser.add_argument("--centroid", nargs=4, required=True, metavar=("LABEL", "X", "Y", "Z"),
                        help="a component's label and its physical centroid")
    parser.add_argument("--png", required=True, help="where to save the rendering")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="relative tolerance of the centroid (default 1e-6)")
    arguments = parser.parse_args()
    arguments.centroid_label = int(arguments.centroid[0])
    arguments.centroid_position = [float(value) for value in arguments.centroid[1:]]
    return arguments


def open_file(path):
    check(os.path.isfile(path), f"{path} is missing")
    reader = simple.OpenDataFile(path)
    check(reader is not None, f"ParaView has no reader for {path}")
    reader.UpdatePipeline()
    return reader, servermanager.Fetch(reader)


def collection_files(path):
    """The file names a .pvd lists, in part order."""
    root = ElementTree.parse(path).getroot()
    check(root.get("type") == "Collection", f"{path} is not a VTK collection")
    data_sets = root.findall("./Collection/DataSet")
    data_sets.sort(key=lambda data_set: int(data_set.get("part", "0")))
    return [data_set.get("file") for data_set in data_sets]


def check_collection(directory):
    """Opens volccl.pvd and checks that its parts are the files beside it."""
    path = os.path.join(directory, "volccl.pvd")
    files = collection_files(path)
    check(files[:2] == ["labels.vti", "components.vtp"] and
          files[2:] in ([], ["surfaces.vtp"]),
          f"{path} lists {files}, not labels.vti, components.vtp [and surfaces.vtp]")
    reader, data = open_file(path)
    check(data.IsA("vtkMultiBlockDataSet"), f"{path} opens as a {data.GetClassName()}")
    check(data.GetNumberOfBlocks() == len(files),
          f"{path} opens as {data.GetNumberOfBlocks()} blocks, not {len(files)}")
    expected_types = ["vtkImageData", "vtkPolyData", "vtkPolyData"]
    for index, name in enumerate(files):
        # ParaView names each part after the entry's name and holds its data set one level down.
        block = data.GetBlock(index)
        block_name = data.GetMetaData(index).Get(data.NAME()) if data.HasMetaData(index) else None
        while block is not None and block.IsA("vtkMultiBlockDataSet"):
            block = block.GetBlock(0)
        check(block is not None and block.IsA(expected_types[index]),
              f"part {index} ({name}) of {path} is not a {expected_types[index]}")
        check(block_name == os.path.splitext(name)[0],
              f"part {index} ({name}) of {path} is named {block_name}")
    simple.Delete(reader)
    return files


def check_image(directory, components):
    path = os.path.join(directory, "labels.vti")
    reader, image = open_file(path)
    labels = image.GetPointData().GetArray("labels") or image.GetCellData().GetArray("labels")
    check(labels is not None, f"{path} has no array 'labels'")
    low, high = labels.GetRange()
    check(low >= 0 and high == components,
          f"the labels of {path} range over [{low:g}, {high:g}], not [0, {components}]")
    print(f"labels.vti: {image.GetDimensions()} points, labels in [{low:g}, {high:g}]")
    return reader, image


def check_components(directory, components, label, position, tolerance):
    path = os.path.join(directory, "components.vtp")
    reader, polydata = open_file(path)
    count = polydata.GetNumberOfPoints()
    check(count == components, f"{path} holds {count} components, not {components}")
    point_data = polydata.GetPointData()
    labels = point_data.GetArray("label")
    check(labels is not None, f"{path} has no array 'label'")
    rows = [row for row in range(count) if int(labels.GetValue(row)) == label]
    check(len(rows) == 1, f"{path} holds {len(rows)} components of label {label}, not 1")
    centroid = polydata.GetPoint(rows[0])
    for axis, (found, expected) in enumerate(zip(centroid, position)):
        check(math.isclose(found, expected, rel_tol=tolerance, abs_tol=tolerance),
              f"the centroid of label {label} is {centroid}, not {tuple(position)} "
              f"(axis {axis}, tolerance {tolerance:g})")
    tensors = point_data.GetTensors()
    check(tensors is not None and tensors.GetName() == "ellipsoid" and
          tensors.GetNumberOfComponents() == 9,
          f"{path} has no 9-component tensors 'ellipsoid' as its active tensors")
    print(f"components.vtp: {count} components, label {label} at {centroid}")
    return reader


def check_surfaces(directory, components):
    path = os.path.join(directory, "surfaces.vtp")
    reader, polydata = open_file(path)
    labels = polydata.GetCellData().GetArray("label")
    check(labels is not None, f"{path} has no cell array 'label'")
    check(polydata.GetNumberOfCells() > 0, f"{path} holds no surface")
    low, high = labels.GetRange()
    check(1 <= low and high <= components,
          f"the labels of {path} range over [{low:g}, {high:g}], not within [1, {components}]")
    print(f"surfaces.vtp: {polydata.GetNumberOfCells()} cells, labels in [{low:g}, {high:g}]")
    return reader


def ellipsoid_glyphs(components):
    """Tensor glyphs of a sphere of radius 1: the tensor's eigenvalues are the semi-axes."""
    try:
        glyphs = simple.TensorGlyph(Input=components, GlyphType="Sphere")
    except AttributeError:
        # No Tensor Glyph in this ParaView: ellipsoids of the right radii, but along x, y, z.
        glyphs = simple.Glyph(Input=components, GlyphType="Sphere")
        glyphs.ScaleArray = ["POINTS", "ellipsoid_radii"]
        glyphs.VectorScaleMode = "Scale by Components"
        glyphs.ScaleFactor = 2  # the glyph's sphere has radius 0.5
        glyphs.GlyphMode = "All Points"
        return glyphs
    glyphs.Tensors = ["POINTS", "ellipsoid"]
    glyphs.ExtractEigenvalues = 1
    glyphs.ScaleFactor = 1
    glyphs.GlyphType.Radius = 1
    glyphs.GlyphType.ThetaResolution = 24
    glyphs.GlyphType.PhiResolution = 12
    return glyphs


def render(image_reader, image, components, components_reader, surfaces_reader, png):
    view = simple.CreateView("RenderView")
    view.ViewSize = IMAGE_SIZE
    view.OrientationAxesVisibility = 0
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.Background = BACKGROUND

    # The image's edges, from its boundary: ParaView 5.11's Outline representation ignores the
    # image's direction.
    edges = simple.FeatureEdges(Input=simple.ExtractSurface(Input=image_reader))
    edges.BoundaryEdges = 1
    edges.FeatureEdges = 1
    edges.NonManifoldEdges = 0
    edges.ManifoldEdges = 0
    outline = simple.Show(edges, view)
    outline.ColorArrayName = ["POINTS", ""]
    outline.AmbientColor = outline.DiffuseColor = [0.8, 0.8, 0.8]

    flat = image.GetDimensions()[2] == 1
    if surfaces_reader is not None:
        surfaces = simple.Show(surfaces_reader, view)
        simple.ColorBy(surfaces, ("CELLS", "label"))
        surfaces.LookupTable = simple.GetColorTransferFunction("label")
        surfaces.LookupTable.ApplyPreset("Rainbow Uniform", True)
        surfaces.RescaleTransferFunctionToDataRange(True, False)
        surfaces.LineWidth = 3
        surfaces.Opacity = 1.0 if flat else 0.45
    else:
        # The labelled voxels; ParaView 5.11's Contour filter ignores the image's direction.
        on_points = image.GetPointData().GetArray("labels") is not None
        voxels = simple.Threshold(Input=image_reader,
                                  Scalars=["POINTS" if on_points else "CELLS", "labels"],
                                  LowerThreshold=1, UpperThreshold=components)
        voxels_display = simple.Show(voxels, view)
        voxels_display.ColorArrayName = ["POINTS", ""]
        voxels_display.Opacity = 0.35

    # A wireframe: the ellipsoids nearly coincide with the surfaces they stand for.
    glyphs = simple.Show(ellipsoid_glyphs(components_reader), view)
    glyphs.SetRepresentationType("Wireframe")
    glyphs.ColorArrayName = ["POINTS", ""]
    glyphs.AmbientColor = glyphs.DiffuseColor = GLYPH_COLOUR

    view.ResetCamera()
    if not flat:
        camera = view.GetActiveCamera()
        camera.Elevation(25)
        camera.Azimuth(35)
        view.ResetCamera()
    simple.Render(view)
    simple.SaveScreenshot(png, view, ImageResolution=IMAGE_SIZE, TransparentBackground=0)
    # Closing the render window before Python exits spares X servers such as Xvfb a GLX error.
    simple.Delete(view)


def check_picture(png):
    """Not blank: over 1% of the pixels differ from the background, in at least 3 colours."""
    check(os.path.isfile(png), f"ParaView did not save {png}")
    reader = vtkPNGReader()
    reader.SetFileName(png)
    reader.Update()
    picture = reader.GetOutput()
    width, height, _ = picture.GetDimensions()
    check([width, height] == IMAGE_SIZE, f"{png} is {width}x{height}, not 1200x900")
    pixels = picture.GetPointData().GetScalars()
    channels = pixels.GetNumberOfComponents()
    values = bytes(memoryview(pixels))
    background = [round(255 * channel) for channel in BACKGROUND]
    colours = set()
    drawn = 0
    for start in range(0, len(values), channels):
        rgb = tuple(values[start:start + 3])
        colours.add(rgb)
        if any(abs(value - reference) > 2 for value, reference in zip(rgb, background)):
            drawn += 1
    fraction = drawn / (width * height)
    check(fraction > 0.01, f"{png} is blank: {100 * fraction:.2f}% of its pixels are drawn")
    check(len(colours) >= 3, f"{png} has only {len(colours)} colours")
    print(f"{png}: {width}x{height}, {100 * fraction:.1f}% drawn, {len(colours)} colours")


def main():
    arguments = parse_arguments()
    try:
        files = check_collection(arguments.dir)
        image_reader, image = check_image(arguments.dir, arguments.components)
        components_reader = check_components(arguments.dir, arguments.components,
                                             arguments.centroid_label,
                                             arguments.centroid_position, arguments.tolerance)
        surfaces_reader = None
        if "surfaces.vtp" in files:
            surfaces_reader = check_surfaces(arguments.dir, arguments.components)
        render(image_reader, image, arguments.components, components_reader, surfaces_reader,
               arguments.png)
        check_picture(arguments.png)
    except CheckFailed as failure:
        print(f"check_vtk_output: FAILED: {failure}", file=sys.stderr)
        return 1
    print("check_vtk_output: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
